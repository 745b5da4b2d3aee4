import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import { type FakeReply, type SlackCall, slackReply } from '../support/fake-slack.js';
import { isRecord } from '../support/json-value.js';
import { waitUntil } from '../support/wait.js';
import { rows } from './db-rows.js';
import { cardTs, type Harness, type HarnessOptions, startHarness } from './harness.js';
import { startPolicyHarness } from './policy-support.js';

/** Card updates Slack refuses are owed like answers: retried, Retry-After honoured, until the card shows the decision. */
describe('a card update Slack refuses', () => {
  const harnesses: Harness[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const h of harnesses.splice(0)) await h.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const start = async (options: Pick<HarnessOptions, 'dbPath'> = {}) => {
    const h = await startHarness({
      env: { OPENAI_STREAM: 'false', RUN_LEASE_MS: '1000' },
      overrides: { deliveryRetryMs: 100 },
      ...options,
    });
    harnesses.push(h);
    return h;
  };
  const owedUpdates = async (h: Harness) =>
    (await rows(h.database, "select id from deliveries where kind = 'card_update'")).map((row) => row.id);
  const accepted = (call: SlackCall) => isRecord(call.reply) && call.reply.ok === true;
  /** The card as the last update Slack accepted left it. */
  const expectDecisionShown = (update: SlackCall | undefined, ts: string) => {
    expect(update?.params.ts).toBe(ts);
    const blocks = JSON.stringify(update?.params.blocks);
    expect(blocks).toContain('Approved by <@U2>');
    expect(blocks).not.toContain('approval:approve');
    expect(blocks).not.toContain('approval:reject');
  };

  /** Asks for a note, approves the card as U2 and waits for the run's answer; resolves with the card's ts. */
  const approveAndFinish = async (h: Harness): Promise<string> => {
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'x' } }]),
      reply.text('Done it.'),
    );
    await h.mention('note x');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    await h.click(card, 'approve', 'U2');
    await h.waitForText((text) => text === 'Done it.');
    return cardTs(card);
  };

  it('429 with Retry-After, then 500, then accepted: the card ends showing the decision, without buttons', async () => {
    const h = await start();
    const script: FakeReply[] = [slackReply.rateLimited(1), slackReply.http(500)];
    const sentAt: number[] = [];
    h.slack.setResponse('chat.update', (params) => {
      sentAt.push(Date.now());
      return script.shift() ?? h.slack.defaultReply('chat.update', params);
    });
    const ts = await approveAndFinish(h);
    const landed = await waitUntil(() => h.slack.callsTo('chat.update').find(accepted), {
      timeoutMs: 10_000,
    });
    expectDecisionShown(landed, ts);
    // Not tried again before Slack's Retry-After (1 s), though the retry interval is 100 ms.
    const [first = 0, second = 0] = sentAt;
    expect(second - first).toBeGreaterThanOrEqual(1000);
    await waitUntil(async () => (await owedUpdates(h)).length === 0);
    expect(h.slack.callsTo('chat.update')).toHaveLength(3);
    expect(h.slack.callsTo('chat.update').at(-1)).toBe(landed);
  });

  it('a copy in the approval channel Slack refuses for now is retried too: no copy keeps its buttons', async () => {
    const h = await startPolicyHarness(
      { tools: { create_note: { approvalChannel: 'C0APPROVE' } } },
      { env: { OPENAI_STREAM: 'false' }, overrides: { deliveryRetryMs: 100 } },
    );
    harnesses.push(h);
    let refused = 0;
    h.slack.setResponse('chat.update', (params) => {
      if (params.channel === 'C0APPROVE' && refused < 2) {
        refused += 1;
        return refused === 1 ? slackReply.rateLimited(1) : slackReply.http(500);
      }
      return h.slack.defaultReply('chat.update', params);
    });
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'x' } }]),
      reply.text('Done it.'),
    );
    await h.mention('note x');
    const [card, copy] = await h.waitForCards(2);
    if (!card || !copy) throw new Error('no card and copy');
    expect(copy.params.channel).toBe('C0APPROVE');
    await h.click(card, 'approve', 'U2');
    await h.waitForText((text) => text === 'Done it.');
    const copyLanded = await waitUntil(
      () => h.slack.callsTo('chat.update').find((c) => c.params.channel === 'C0APPROVE' && accepted(c)),
      { timeoutMs: 10_000 },
    );
    expect(refused).toBe(2);
    expect(JSON.stringify(copyLanded.params.blocks)).not.toContain('approval:approve');
    await waitUntil(async () => (await owedUpdates(h)).length === 0);
  });

  it('an update still owed when the bot stops lands after a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'card-update-'));
    dirs.push(dir);
    const dbPath = join(dir, 'bot.db');
    const first = await start({ dbPath });
    first.slack.setResponse('chat.update', () => slackReply.http(500));
    const ts = await approveAndFinish(first);
    await waitUntil(() => first.slack.callsTo('chat.update').length >= 2);
    expect(await owedUpdates(first)).toHaveLength(1);
    await first.close();
    harnesses.splice(harnesses.indexOf(first), 1);

    const second = await start({ dbPath });
    const landed = await waitUntil(() => second.slack.callsTo('chat.update').find(accepted), {
      timeoutMs: 10_000,
    });
    expectDecisionShown(landed, ts);
    await waitUntil(async () => (await owedUpdates(second)).length === 0);
  });
});
