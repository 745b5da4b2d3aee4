import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runAuditCli } from '../../../src/cli/audit-cli.js';
import { seedApprovals } from '../../support/audit-seed.js';
import { type ConsoleClient, signInWithLink } from '../../support/console-client.js';
import { type Harness, startHarness } from '../harness.js';

const ADMIN = 'UADMIN';
const AUDITOR = 'UAUDIT';
const T0 = Date.parse('2026-05-01T10:00:00Z');
const MINUTE = 60_000;

interface EventItem {
  seq: number;
  kind: string;
  actor: string;
  tool: string | null;
  approvalId: string | null;
  runId: string | null;
}
interface AuditPage {
  items: EventItem[];
  nextCursor: string | null;
}

describe('web console: history', () => {
  let h: Harness;
  let origin: string;
  let ids: { approved: string; rejected: string; pending: string; other: string };
  const env = () => ({ DATABASE_PATH: h.dbPath, ADMIN_USER_IDS: ADMIN });
  beforeEach(async () => {
    h = await startHarness({ env: { ADMIN_USER_IDS: ADMIN, AUDITOR_USER_IDS: AUDITOR } });
    origin = new URL(h.url).origin;
    const [approved = '', rejected = '', pending = '', other = ''] = await seedApprovals(
      h.database,
      { createdAt: T0, status: 'approved', decidedBy: ADMIN, channelId: 'C1', requesterId: 'UREQ1' },
      {
        createdAt: T0 + 10 * MINUTE,
        status: 'rejected',
        decidedBy: 'UB',
        toolName: 'send_email',
        channelId: 'C2',
        requesterId: 'UREQ2',
        arguments: { subject: 'Quarterly PLAN' },
      },
      { createdAt: T0 + 20 * MINUTE, requesterId: 'UREQ3', channelId: 'C1' },
      {
        teamId: 'T9OTHER',
        createdAt: T0 + 30 * MINUTE,
        status: 'rejected',
        decidedBy: 'UB',
        requesterId: 'UREQ1',
        arguments: { subject: 'quarterly plan of another workspace' },
      },
    );
    ids = { approved, rejected, pending, other };
  });
  afterEach(async () => {
    await h.close();
  });

  const auditPage = async (client: ConsoleClient, query: string): Promise<AuditPage> => {
    const answer = await client.get(`/console/api/audit${query}`);
    expect(answer.status).toBe(200);
    return (await answer.json()) as AuditPage;
  };
  const kindsOf = async (client: ConsoleClient, query: string) =>
    (await auditPage(client, query)).items.map((e) => `${e.kind}:${e.approvalId ?? '-'}`);

  it('each filter narrows the log; a bad filter is a 400 with a code; another workspace never appears', async () => {
    const auditor = await signInWithLink(origin, env(), AUDITOR);
    expect(await kindsOf(auditor, '?tool=send_email')).toEqual([
      `approval.rejected:${ids.rejected}`,
      `approval.requested:${ids.rejected}`,
    ]);
    expect(await kindsOf(auditor, '?actor=UREQ3')).toEqual([`approval.requested:${ids.pending}`]);
    expect(await kindsOf(auditor, `?actor=${ADMIN}&kind=approval.approved`)).toEqual([
      `approval.approved:${ids.approved}`,
    ]);
    expect(await kindsOf(auditor, '?outcome=pending')).toEqual([`approval.requested:${ids.pending}`]);
    expect(await kindsOf(auditor, '?channel=C2&outcome=rejected')).toEqual([
      `approval.rejected:${ids.rejected}`,
      `approval.requested:${ids.rejected}`,
    ]);
    expect(await kindsOf(auditor, '?q=quarterly')).toEqual([`approval.requested:${ids.rejected}`]);
    const window = `?since=2026-05-01T10:15:00Z&until=${encodeURIComponent('2026-05-01T10:25:00.000Z')}`;
    expect(await kindsOf(auditor, window)).toEqual([`approval.requested:${ids.pending}`]);

    for (const bad of ['?since=yesterday', '?outcome=maybe', '?limit=0', '?cursor=abc']) {
      const answer = await auditor.get(`/console/api/audit${bad}`);
      expect(answer.status, bad).toBe(400);
      expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('bad_filter');
    }
    const everything = await auditPage(auditor, '?limit=200');
    expect(everything.items.some((e) => e.approvalId === ids.other)).toBe(false);
    expect(JSON.stringify(everything)).not.toContain('another workspace');
  });

  it('pages by cursor return every event exactly once, newest first, and the page links to the older one', async () => {
    const admin = await signInWithLink(origin, env(), ADMIN);
    const all = (await auditPage(admin, '?limit=200')).items.map((e) => e.seq);
    expect(all.length).toBeGreaterThan(5);
    const seen: number[] = [];
    let query = '?limit=2';
    for (let pages = 0; pages < 50; pages += 1) {
      const next = await auditPage(admin, query);
      seen.push(...next.items.map((e) => e.seq));
      if (next.nextCursor === null) break;
      query = `?limit=2&cursor=${next.nextCursor}`;
    }
    expect(seen).toEqual(all);
    expect(new Set(seen).size).toBe(seen.length);
    expect([...seen].sort((a, b) => b - a)).toEqual(seen);

    const pageHtml = await (await admin.get('/console/history?limit=2&tool=create_note')).text();
    expect(pageHtml).toMatch(/href="\/console\/history\?cursor=\d+&amp;limit=2&amp;tool=create_note"/);
    expect(pageHtml).toContain(`href="/console/runs/run_${ids.approved}"`);
  });

  it('a person who is neither admin nor auditor gets 403 on the history and its API, and on a run they may not see', async () => {
    const stranger = await signInWithLink(origin, env(), 'USTRANGER');
    for (const path of [
      '/console/history',
      '/console/api/audit',
      '/console/api/audit/verify',
      '/console/api/audit/export?format=csv',
      `/console/runs/run_${ids.approved}`,
      `/console/api/runs/run_${ids.approved}`,
    ])
      expect((await stranger.get(path)).status, path).toBe(403);
    const guessed = await stranger.get(`/console/api/runs/run_${ids.approved}`);
    const unknown = await stranger.get('/console/api/runs/run_unknown');
    expect(await guessed.json()).toEqual(await unknown.json());
    // Another workspace's run is unknown here, even to an admin.
    const admin = await signInWithLink(origin, env(), ADMIN);
    expect((await admin.get(`/console/api/runs/run_${ids.other}`)).status).toBe(403);

    // The requester may see their request, so its run's timeline too.
    const requester = await signInWithLink(origin, env(), 'UREQ1');
    const timeline = (await (await requester.get(`/console/api/runs/run_${ids.approved}`)).json()) as {
      steps: { step: string; kind: string }[];
    };
    expect(timeline.steps.map((s) => `${s.step}:${s.kind}`)).toEqual([
      'Approval requested:approval.requested',
      'Decision:approval.approved',
    ]);
    const runHtml = await (await requester.get(`/console/runs/run_${ids.approved}`)).text();
    expect(runHtml).toContain('Approval requested');
    expect(runHtml).toContain(`href="/console/approvals/${ids.approved}"`);
  });

  it('the export of a filtered view is byte for byte what npm run audit -- export writes for the same filter', async () => {
    const auditor = await signInWithLink(origin, env(), AUDITOR);
    const dir = mkdtempSync(join(tmpdir(), 'console-export-'));
    try {
      for (const format of ['csv', 'jsonl'] as const) {
        const web = await auditor.get(
          `/console/api/audit/export?format=${format}&tool=create_note&actor=UREQ1&since=2026-05-01&outcome=approved`,
        );
        expect(web.status).toBe(200);
        expect(web.headers.get('content-disposition')).toContain(`.${format}"`);
        const out = join(dir, `audit.${format}`);
        const lines: string[] = [];
        const code = await runAuditCli(
          // The harness's workspace (T1) is shorter than the command's --team takes; the other workspace's
          // only request was rejected, so this filter leaves it out there too.
          ['export', '--out', out, '--tool', 'create_note', '--user', 'UREQ1'].concat([
            '--since',
            '2026-05-01',
            '--status',
            'approved',
            '--format',
            format,
          ]),
          env(),
          { out: (l) => lines.push(l), err: (l) => lines.push(l), now: () => Date.now() },
        );
        expect(code, lines.join('\n')).toBe(0);
        const text = await web.text();
        expect(text).toBe(readFileSync(out, 'utf8'));
        expect(text).toContain(ids.approved);
        expect(text.trim().split('\n')).toHaveLength(format === 'csv' ? 3 : 2);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the chain badge says verified, and broken once a row is edited in the database', async () => {
    const auditor = await signInWithLink(origin, env(), AUDITOR);
    const intact = (await (await auditor.get('/console/api/audit/verify')).json()) as { state: string };
    expect(intact.state).toBe('verified');
    expect(await (await auditor.get('/console/history')).text()).toContain('Chain verified');

    const raw = new Database(h.dbPath);
    raw.exec('DROP TRIGGER IF EXISTS audit_events_no_update; DROP TRIGGER IF EXISTS audit_events_no_delete;');
    raw.prepare('update audit_events set actor = ? where approval_id = ?').run('UFORGED', ids.pending);
    raw.close();

    const broken = (await (await auditor.get('/console/api/audit/verify')).json()) as {
      state: string;
      message: string;
    };
    expect(broken.state).toBe('broken');
    expect(broken.message).toContain('was edited');
    const pageHtml = await (await auditor.get('/console/history?verify=now')).text();
    expect(pageHtml).toContain('Chain broken at event');
  });
});
