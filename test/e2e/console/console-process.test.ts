import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { auditEvent } from '../../../src/audit/audit-event.js';
import { runAuditCli } from '../../../src/cli/audit-cli.js';
import { seedAuditEvents } from '../../support/audit-seed.js';
import { type BotProcess, startBotProcess } from '../../support/bot-process.js';
import { signInWithLink } from '../../support/console-client.js';
import { type FakeOpenAI, reply, startFakeOpenAI } from '../../support/fake-openai.js';
import { type FakeSlack, startFakeSlack } from '../../support/fake-slack.js';
import { appMentionEvent, eventEnvelope, nextTs, postEvent } from '../../support/slack-requests.js';
import { rows } from '../db-rows.js';
import { approvalIdOf, isApprovalCard, SECRET } from '../harness.js';

/**
 * The console of the bot `npm start` runs, with one run worker and the console's own worker (the thread
 * acking Slack relays its requests): a decision made on the web is passed on to the run worker, which follows it
 * up (card updated, run resumed) as it does a click's; an export streams through the relay.
 */
describe('web console of the real bot process', () => {
  let slack: FakeSlack;
  let model: FakeOpenAI;
  let dir: string;
  let bot: BotProcess | undefined;

  beforeEach(async () => {
    slack = await startFakeSlack();
    model = await startFakeOpenAI();
    dir = mkdtempSync(join(tmpdir(), 'bot-console-'));
  });
  afterEach(async () => {
    await bot?.kill();
    await slack.close();
    await model.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('an admin approves on the web; the worker updates the card and the run answers', async () => {
    const env = { DATABASE_PATH: join(dir, 'bot.db'), ADMIN_USER_IDS: 'UADMIN' };
    bot = await startBotProcess({
      env: {
        ...env,
        SLACK_BOT_TOKEN: 'xoxb-console',
        SLACK_SIGNING_SECRET: SECRET,
        SLACK_API_URL: slack.url,
        OPENAI_API_KEY: 'sk-console',
        OPENAI_BASE_URL: model.baseURL,
        OPENAI_STREAM: 'false',
        WORKERS: '1',
        LOG_LEVEL: 'warn',
      },
    });
    model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'from the web' } }]),
      reply.text('Noted from the web.'),
    );
    const ts = nextTs();
    const sent = await postEvent(
      `${bot.url}/slack/events`,
      SECRET,
      eventEnvelope(appMentionEvent({ user: 'U1', channel: 'C1', text: '<@UBOT> add a note', ts })),
    );
    expect(sent.status).toBe(200);
    const card = await slack.waitForCall('chat.postMessage', isApprovalCard, 10_000);
    const id = approvalIdOf(card);

    const admin = await signInWithLink(bot.url, env, 'UADMIN');
    const decided = await admin.postJson(`/console/api/approvals/${id}/decision`, { decision: 'approve' });
    expect(decided.status).toBe(200);
    await slack.waitForCall('chat.postMessage', (c) => c.params.text === 'Noted from the web.', 10_000);
    const update = await slack.waitForCall('chat.update', undefined, 10_000);
    expect(JSON.stringify(update.params.blocks)).toContain('Approved by <@UADMIN>');
    const approved = await rows(
      env.DATABASE_PATH,
      "select payload from audit_events where kind = 'approval.approved'",
    );
    expect(JSON.parse(String(approved[0]?.payload)).surface).toBe('web');
  });

  it('an export streamed from the worker is what npm run audit -- export writes; a client leaving mid-export breaks nothing; a body over 256 KB gets 413', async () => {
    const env = { DATABASE_PATH: join(dir, 'bot.db'), ADMIN_USER_IDS: 'UADMIN' };
    // Enough of the log for the export to take many chunks (about 3 MB of CSV).
    const at = Date.parse('2026-05-01T00:00:00Z');
    await seedAuditEvents(
      { kind: 'sqlite', path: env.DATABASE_PATH },
      Array.from({ length: 6_000 }, (_, i) =>
        auditEvent('approval.requested', {
          at: at + i,
          actor: 'U1',
          teamId: 'T1',
          conversationId: `conv_${i}`,
          runId: `run_${i}`,
          approvalId: `apr_${i}`,
          payload: { tool: 'create_note', arguments: { text: `note ${i} ${'x'.repeat(400)}` } },
        }),
      ),
    );
    bot = await startBotProcess({
      env: {
        ...env,
        SLACK_BOT_TOKEN: 'xoxb-console',
        SLACK_SIGNING_SECRET: SECRET,
        SLACK_API_URL: slack.url,
        OPENAI_API_KEY: 'sk-console',
        OPENAI_BASE_URL: model.baseURL,
        WORKERS: '1',
        LOG_LEVEL: 'warn',
      },
    });
    const admin = await signInWithLink(bot.url, env, 'UADMIN');
    const exportPath = '/console/api/audit/export?format=csv&tool=create_note';

    const leaving = new AbortController();
    const cut = await fetch(`${bot.url}${exportPath}`, {
      headers: { cookie: admin.cookie },
      signal: leaving.signal,
    });
    expect(cut.status).toBe(200);
    await cut.body?.getReader().read();
    leaving.abort();

    const web = await admin.get(exportPath);
    expect(web.status).toBe(200);
    const text = await web.text();
    const out = join(dir, 'audit.csv');
    const lines: string[] = [];
    const code = await runAuditCli(
      ['export', '--out', out, '--tool', 'create_note', '--format', 'csv'],
      env,
      {
        out: (l) => lines.push(l),
        err: (l) => lines.push(l),
        now: () => Date.now(),
      },
    );
    expect(code, lines.join('\n')).toBe(0);
    expect(text.trim().split('\n')).toHaveLength(6_001);
    expect(text).toBe(readFileSync(out, 'utf8'));

    const tooLarge = await admin.postJson('/console/api/approvals/apr_1/decision', {
      decision: 'approve',
      note: 'x'.repeat(256 * 1024),
    });
    expect(tooLarge.status).toBe(413);
    expect(((await tooLarge.json()) as { error: { code: string } }).error.code).toBe('too_large');
    expect((await admin.get('/console/api/me')).status).toBe(200);
  });
});
