import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import { cardTs, type Harness } from './harness.js';
import { blocksText, FakeClock, HOUR, query, startPolicyHarness } from './policy-support.js';

const EXPIRY_OUTPUT =
  'Tool execution was not approved: the approval request expired after 24h with no decision.';

describe('approval policy: expiry and reminders', () => {
  const open: Harness[] = [];
  afterEach(async () => {
    for (const h of open.splice(0)) await h.close();
  });
  const start = async (...args: Parameters<typeof startPolicyHarness>) => {
    const h = await startPolicyHarness(...args);
    open.push(h);
    return h;
  };

  it('an expired request is marked expired, its card says so, and the model reads that it expired', async () => {
    const clock = new FakeClock();
    const h = await start({ tools: { create_note: { expiresAfter: '24h' } } }, { overrides: { clock } });
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'late' } }]),
      reply.text('Nobody decided in time.'),
    );
    await h.mention('add a note late');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    const [row] = await query(h.database, 'SELECT expires_at FROM approvals');
    expect(row?.expires_at).toBe(clock.t + 24 * HOUR);

    clock.advance(24 * HOUR - 1);
    await h.bot.checkDeadlines();
    expect(await query(h.database, 'SELECT status FROM approvals')).toEqual([{ status: 'pending' }]);

    clock.advance(1);
    // Past the deadline a click decides nothing, even before the scheduler has looked.
    await h.click(card, 'approve', 'U2');
    const early = await h.slack.waitForCall('chat.postEphemeral');
    expect(early.params.text).toBe('This request expired before anyone decided it.');
    expect(await query(h.database, 'SELECT status FROM approvals')).toEqual([{ status: 'pending' }]);
    await h.bot.checkDeadlines();
    await h.waitForText((t) => t === 'Nobody decided in time.');
    const update = await h.slack.waitForCall('chat.update');
    expect(update.params.ts).toBe(cardTs(card));
    expect(blocksText(update)).toContain('Expired after 24h, no decision');
    expect(blocksText(update)).not.toContain('approval:approve');
    const tool = h.model.requests[1]?.messages.find((m) => m.role === 'tool');
    expect(tool?.content).toBe(EXPIRY_OUTPUT);
    expect(tool?.content).not.toBe('Tool execution was not approved.');
    expect(await query(h.database, 'SELECT COUNT(*) AS n FROM notes')).toEqual([{ n: 0 }]);
    const audit = await query(h.database, "SELECT payload FROM audit_events WHERE kind = 'approval.expired'");
    expect(audit.map((e) => JSON.parse(String(e.payload)).rule.expiresAfterMs)).toEqual([24 * HOUR]);

    // A late click changes nothing and is told why.
    await h.click(card, 'approve', 'U3');
    const notice = await h.slack.waitForCall('chat.postEphemeral', (c) => c.params.user === 'U3');
    expect(notice.params.text).toBe('This request expired before anyone decided it.');
    await h.bot.checkDeadlines();
    expect(h.model.requests).toHaveLength(2);
  });

  it('a request whose deadline passed while the bot was down expires at start-up and the run resumes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'policy-restart-'));
    const dbPath = join(dir, 'bot.db');
    const policy = { tools: { create_note: { expiresAfter: '24h' } } };
    const clock = new FakeClock();
    const before = await startPolicyHarness(policy, { dbPath, overrides: { clock } });
    before.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: 'weekend' } }]));
    await before.mention('add a note weekend');
    const [card] = await before.waitForCards(1);
    if (!card) throw new Error('no card');
    await before.close();

    clock.advance(3 * 24 * HOUR);
    const after = await start(policy, { dbPath, overrides: { clock } });
    after.model.enqueue(reply.text('That request expired while I was away.'));
    // start() has already handled the deadline: no tick of the scheduler was needed.
    await after.waitForText((t) => t === 'That request expired while I was away.');
    const update = await after.slack.waitForCall('chat.update');
    expect(update.params.ts).toBe(cardTs(card));
    expect(blocksText(update)).toContain('Expired after 24h, no decision');
    const tool = after.model.requests[0]?.messages.find((m) => m.role === 'tool');
    expect(tool?.content).toBe(EXPIRY_OUTPUT);
    expect(await query(dbPath, 'SELECT status FROM approvals')).toEqual([{ status: 'expired' }]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('exactly one reminder per period, mentioning who may decide, and none after the decision', async () => {
    const clock = new FakeClock();
    const h = await start(
      { tools: { delete_note: { approvers: ['admins', 'S0OPS', 'U0BOSS'], remindAfter: '1h' } } },
      { overrides: { clock } },
    );
    h.model.enqueue(reply.toolCalls([{ name: 'delete_note', arguments: { id: 4 } }]), reply.text('Deleted.'));
    const ts = await h.mention('delete note 4');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    const reminders = () => h.texts().filter((t) => t.includes('Reminder'));

    clock.advance(59 * 60_000);
    await h.bot.checkDeadlines();
    expect(reminders()).toEqual([]);

    clock.advance(90 * 60_000); // 2h29m after the request: one period passed, the second not yet
    await Promise.all([h.bot.checkDeadlines(), h.bot.checkDeadlines(), h.bot.checkDeadlines()]);
    expect(reminders()).toHaveLength(1);
    const [reminder] = h.slack
      .callsTo('chat.postMessage')
      .filter((c) => String(c.params.text).includes('Reminder'));
    expect(reminder?.params.thread_ts).toBe(ts);
    expect(reminder?.params.text).toContain(
      'is still waiting for a decision. It can be decided by <@UADMIN>, <!subteam^S0OPS>, <@U0BOSS>.',
    );

    clock.advance(30 * 60_000);
    await h.bot.checkDeadlines();
    expect(reminders()).toHaveLength(1);
    clock.advance(31 * 60_000);
    await h.bot.checkDeadlines();
    expect(reminders()).toHaveLength(2);

    await h.click(card, 'approve', 'UADMIN');
    await h.waitForText((t) => t === 'Deleted.');
    clock.advance(10 * HOUR);
    await h.bot.checkDeadlines();
    expect(reminders()).toHaveLength(2);
    expect(
      await query(h.database, "SELECT COUNT(*) AS n FROM audit_events WHERE kind = 'approval.reminded'"),
    ).toEqual([{ n: 2 }]);
    // The policy in force was recorded when the bot started.
    const [loaded] = await query(h.database, "SELECT payload FROM audit_events WHERE kind = 'policy.loaded'");
    expect(JSON.parse(String(loaded?.payload)).summary).toMatch(
      /^Approval policy \(.+policy\.json\): .*delete_note: admins or S0OPS or U0BOSS, no self-approval, no standing approval, reminder every 1h;/,
    );
  });
});
