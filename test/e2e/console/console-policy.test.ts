import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReplayedRequest } from '../../../src/approvals/policy-replay.js';
import { runPolicyCli } from '../../../src/cli/policy-cli.js';
import { toolNames } from '../../../src/tools/built-in-tools.js';
import { seedApprovals } from '../../support/audit-seed.js';
import { type ConsoleClient, signInWithLink } from '../../support/console-client.js';
import { rows } from '../db-rows.js';
import { type Harness, startHarness } from '../harness.js';

const ADMIN = 'UADMIN';
const AUDITOR = 'UAUDIT';
const DAY = 86_400_000;
/** Only admins may decide create_note, and two of them: every past create_note decision changes. */
const CANDIDATE = JSON.stringify({ tools: { create_note: { approvers: ['admins'], quorum: 2 } } });
const INVALID = JSON.stringify({ tools: { create_note: { quorum: 0, approvers: [] }, send_rocket: {} } });

interface ApiError {
  error: { code: string; message: string; problems?: string[] };
}

describe('web console: policy', () => {
  let h: Harness;
  let origin: string;
  let admin: ConsoleClient;
  let dir: string;
  let otherTeam: string;
  const env = () => ({ DATABASE_PATH: h.dbPath, ADMIN_USER_IDS: ADMIN });

  /** What `npm run policy -- COMMAND FILE …` prints for `text`, on the bot's database. */
  async function cli(command: 'check' | 'replay', text: string, ...more: string[]) {
    const file = join(dir, `${command}.json`);
    writeFileSync(file, text);
    const out: string[] = [];
    const err: string[] = [];
    const code = await runPolicyCli([command, file, ...more], {
      out: (l) => out.push(l),
      err: (l) => err.push(l),
      env: env(),
    });
    return { code, out, err, file };
  }

  beforeAll(async () => {
    h = await startHarness({ env: { ADMIN_USER_IDS: ADMIN, AUDITOR_USER_IDS: AUDITOR } });
    origin = new URL(h.url).origin;
    dir = mkdtempSync(join(tmpdir(), 'console-policy-'));
    const now = Date.now();
    const ids = await seedApprovals(
      h.database,
      { toolName: 'create_note', status: 'approved', decidedBy: 'U2', createdAt: now - 3 * DAY },
      { toolName: 'create_note', createdAt: now - 2 * DAY },
      { toolName: 'delete_note', status: 'approved', decidedBy: ADMIN, createdAt: now - DAY },
      // Older than the replay's 30 days, and another workspace's request.
      { toolName: 'create_note', status: 'approved', decidedBy: 'U2', createdAt: now - 60 * DAY },
      { toolName: 'create_note', status: 'approved', decidedBy: 'U2', createdAt: now - DAY, teamId: 'T2' },
    );
    otherTeam = ids[4] ?? '';
    admin = await signInWithLink(origin, env(), ADMIN);
  });
  afterAll(async () => {
    await h.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows the policy in force as a table with a row for each tool', async () => {
    const api = (await (await admin.get('/console/api/policy')).json()) as {
      source: string;
      tools: { tool: string; approvers: string[]; quorum: number; selfApproval: boolean }[];
    };
    expect(api.source).toBe('built-in defaults');
    expect(api.tools.map((t) => t.tool)).toEqual([...[...toolNames()].sort(), '(other tools)']);
    expect(api.tools.find((t) => t.tool === 'delete_note')).toMatchObject({
      approvers: ['admins'],
      quorum: 1,
      selfApproval: false,
    });
    const page = await admin.get('/console/policy');
    expect(page.status).toBe(200);
    const text = await page.text();
    for (const tool of toolNames()) expect(text).toContain(`<th scope="row"><code>${tool}</code></th>`);
    expect(text).toContain('action="/console/policy/replay"');
  });

  it('replays a candidate as the command line does: the same changed decisions, of this workspace only, writing nothing', async () => {
    const before = await rows(h.dbPath, 'select count(*) as n from audit_events');
    const answer = await admin.postJson('/console/api/policy/replay', { policy: CANDIDATE, days: 30 });
    expect(answer.status).toBe(200);
    const replay = (await answer.json()) as { requests: number; changed: ReplayedRequest[] };

    const printed = await cli('replay', CANDIDATE, '--since', '30d', '--format', 'jsonl');
    expect(printed.code).toBe(0);
    const cliChanged = printed.out
      .map((line) => JSON.parse(line) as ReplayedRequest)
      .filter((r) => r.differences.length > 0);
    // The command line reads every workspace; the console only the signed-in person's.
    expect(cliChanged.map((r) => r.approvalId)).toContain(otherTeam);
    expect(replay.changed).toEqual(cliChanged.filter((r) => r.approvalId !== otherTeam));
    expect(replay.requests).toBe(3);
    expect(replay.changed.map((r) => r.differences)).toEqual([
      ['deciders conversation or admins → admins', 'quorum 1 → 2', 'U2 would not be allowed to decide'],
      ['deciders conversation or admins → admins', 'quorum 1 → 2'],
    ]);

    // The page's form gives the same replay.
    const page = await admin.postForm('/console/policy/replay', { policy: CANDIDATE, days: '30' });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('Decisions that would change (2)');
    for (const r of replay.changed) expect(html).toContain(`/console/approvals/${r.approvalId}`);
    expect(html).not.toContain(otherTeam);
    expect(await rows(h.dbPath, 'select count(*) as n from audit_events')).toEqual(before);
  });

  it('an invalid candidate gets 400 with the very problems the command line prints', async () => {
    for (const text of [INVALID, '{"tools": {']) {
      const printed = await cli('check', text);
      expect(printed.code).toBe(1);
      const problems = printed.err
        .filter((line) => line.startsWith('  - '))
        .map((line) => line.slice(4).replaceAll(printed.file, 'candidate policy'));
      expect(problems.length).toBeGreaterThan(0);
      const answer = await admin.postJson('/console/api/policy/replay', { policy: text });
      expect(answer.status).toBe(400);
      const body = (await answer.json()) as ApiError;
      expect(body.error.code).toBe('invalid_policy');
      expect(body.error.problems).toEqual(problems);
      const page = await admin.postForm('/console/policy/replay', { policy: text, days: '30' });
      expect(page.status).toBe(400);
      expect(await page.text()).toContain(`problem(s)`);
    }
    const days = await admin.postJson('/console/api/policy/replay', { policy: CANDIDATE, days: 0 });
    expect(days.status).toBe(400);
    expect(((await days.json()) as ApiError).error.code).toBe('bad_days');
  });

  it('without the CSRF token a replay is refused with 403', async () => {
    const api = await admin.postJson('/console/api/policy/replay', { policy: CANDIDATE }, null);
    expect(api.status).toBe(403);
    expect(((await api.json()) as ApiError).error.code).toBe('csrf');
    const form = await admin.postForm('/console/policy/replay', { policy: CANDIDATE }, 'forged');
    expect(form.status).toBe(403);
  });

  it('anyone but an admin, an auditor too, gets 403 from the page and the API', async () => {
    for (const user of [AUDITOR, 'USTRANGER']) {
      const person = await signInWithLink(origin, env(), user);
      expect((await person.get('/console/api/policy')).status).toBe(403);
      const replay = await person.postJson('/console/api/policy/replay', { policy: CANDIDATE });
      expect(replay.status).toBe(403);
      expect(((await replay.json()) as ApiError).error.code).toBe('not_permitted');
      const page = await person.get('/console/policy');
      expect(page.status).toBe(403);
      expect(await page.text()).not.toContain('create_note');
      expect((await person.postForm('/console/policy/replay', { policy: CANDIDATE })).status).toBe(403);
    }
  });
});
