import { describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import type { SlackCall } from '../support/fake-slack.js';
import type { DatabaseKind } from '../support/test-database.js';
import { waitUntil } from '../support/wait.js';
import { cardTs, isApprovalCard } from './harness.js';
import { writePolicy } from './policy-support.js';
import {
  approveSlowPost,
  type Latch,
  type ProcessFixture,
  SLOW_CHANNEL,
  useProcessFixture,
} from './process-fixture.js';

/** How long a bot process may take to reach a stage: each test starts two, on a machine that may be busy. */
const PROCESS_WAIT_MS = 15_000;

/**
 * SIGKILL at each stage of an approved call, then a restart on the same database: no approval lost, no call
 * executed twice, and the thread learns the outcome. The stages are reached by making one fake slow, so the
 * product needs no test hooks. One test file per database engine (crash-stages-*.test.ts), so the two run
 * side by side.
 */
export function crashStages(kind: DatabaseKind): void {
  describe(`crash at each stage (SIGKILL, then restart), on ${kind}`, { timeout: 45_000 }, () => {
    let f: ProcessFixture;
    let held: Latch;
    useProcessFixture(
      (fixture, latch) => {
        f = fixture;
        held = latch;
      },
      { kind },
    );

    const notes = () => f.query('select text from notes');
    const approvalStatus = async () =>
      (await f.query('select status from approvals')).map((row) => row.status);
    /** Replies the database says are still owed to threads: what a restart must post. */
    const owedReplies = () => f.query("select id, text from deliveries where kind = 'reply'");
    const runIds = async () => (await f.query('select id from runs')).map((row) => String(row.id));
    const toolMessages = (request: number) =>
      f.model.requests[request]?.messages.filter((m) => m.role === 'tool').map((m) => m.content);

    it('while the card is being posted: the card is posted after the restart and the click completes the run', async () => {
      let first = true;
      f.slack.setResponse('chat.postMessage', async (params) => {
        if (params.blocks !== undefined && first) {
          first = false;
          await held.wait;
        }
        return f.slack.defaultReply('chat.postMessage', params);
      });
      f.model.enqueue(
        reply.toolCalls([{ name: 'create_note', arguments: { text: 'kept' } }]),
        reply.text('Saved.'),
      );
      let bot = await f.start();
      await f.mention(bot, 'note kept');
      await f.slack.waitForCall(
        'chat.postMessage',
        (call) => call.params.blocks !== undefined,
        PROCESS_WAIT_MS,
      );
      await bot.kill();

      bot = await f.start();
      const cards = await f.waitForCards(2);
      const card = cards.at(-1);
      if (!card) throw new Error('no card');
      expect((await f.click(bot, card, 'approve', 'U2')).status).toBe(200);
      await f.waitForText((text) => text === 'Saved.');
      expect(await notes()).toEqual([{ text: 'kept' }]);
      expect(await approvalStatus()).toEqual(['executed']);
    });

    it('after Slack posted the card, before its answer arrived: the restart finds the card in the thread, posts no second one, and posts the copy the first did not get to', async () => {
      let posted: SlackCall | undefined;
      f.slack.setResponse('chat.postMessage', async (params, call) => {
        const answer = f.slack.defaultReply('chat.postMessage', params);
        if (params.blocks !== undefined && !posted) {
          // Slack has the card in its thread; the process never hears so.
          posted = { ...call, reply: answer.body };
          await held.wait;
        }
        return answer;
      });
      f.model.enqueue(
        reply.toolCalls([{ name: 'create_note', arguments: { text: 'once' } }]),
        reply.text('Saved once.'),
      );
      // The card is copied to an approval channel, after the thread card: the killed process never got there.
      const policy = {
        APPROVAL_POLICY_FILE: writePolicy({ tools: { create_note: { approvalChannel: 'C0APPROVE' } } }),
      };
      let bot = await f.start(policy);
      await f.mention(bot, 'note once');
      await waitUntil(() => posted, { timeoutMs: PROCESS_WAIT_MS, message: 'the card posted' });
      await bot.kill();
      expect(f.slack.callsTo('chat.postMessage').filter((c) => c.params.channel === 'C0APPROVE')).toEqual([]);

      bot = await f.start(policy);
      const [row] = await waitUntil(
        async () => {
          const rows = await f.query('select message_ts from approvals where message_ts is not null');
          return rows.length > 0 ? rows : undefined;
        },
        { timeoutMs: PROCESS_WAIT_MS, message: 'the card recorded' },
      );
      if (!posted) throw new Error('no card');
      expect(row?.message_ts).toBe(cardTs(posted));
      const cards = () => f.slack.callsTo('chat.postMessage').filter(isApprovalCard);
      await waitUntil(() => cards().some((c) => c.params.channel === 'C0APPROVE'), {
        timeoutMs: PROCESS_WAIT_MS,
        message: 'the copy posted',
      });
      expect(cards().map((c) => c.params.channel)).toEqual(['C1', 'C0APPROVE']);
      const events = await f.query(
        "select payload from audit_events where kind = 'approval.card_posted' order by seq",
      );
      expect(events.map((e) => JSON.parse(String(e.payload)))).toEqual([
        expect.objectContaining({ channelId: 'C0APPROVE', copy: true }),
        { channelId: 'C1', messageTs: cardTs(posted), found: true },
      ]);
      expect((await f.click(bot, posted, 'approve', 'U2')).status).toBe(200);
      await f.waitForText((text) => text === 'Saved once.');
      expect(await notes()).toEqual([{ text: 'once' }]);
      expect(f.texts().some((text) => text.includes('could not post the approval card'))).toBe(false);
    });

    it('after the decision is committed, before the tool starts: the restart runs the call once and shows the decision on the card', async () => {
      f.slack.setResponse('chat.update', async (params) => {
        await held.wait;
        return f.slack.defaultReply('chat.update', params);
      });
      f.model.enqueue(
        reply.toolCalls([{ name: 'create_note', arguments: { text: 'decided' } }]),
        reply.text('Noted after the restart.'),
      );
      let bot = await f.start();
      await f.mention(bot, 'note decided');
      const [card] = await f.waitForCards(1);
      if (!card) throw new Error('no card');
      expect((await f.click(bot, card, 'approve', 'U2')).status).toBe(200);
      // The card is updated only after the decision is committed; the tool runs after the update.
      await f.slack.waitForCall('chat.update', () => true, PROCESS_WAIT_MS);
      expect(await approvalStatus()).toEqual(['approved']);
      await bot.kill();

      f.slack.clearResponse('chat.update');
      const restartedAt = f.slack.calls.length;
      bot = await f.start();
      await f.waitForText((text) => text === 'Noted after the restart.');
      expect(await notes()).toEqual([{ text: 'decided' }]);
      // The update in flight at the kill may never have reached Slack: the restart shows the decision again.
      const shown = await waitUntil(
        () =>
          f.slack.calls
            .slice(restartedAt)
            .filter((c) => c.method === 'chat.update' && c.params.ts === cardTs(card))
            .at(-1),
        { timeoutMs: PROCESS_WAIT_MS, message: 'the card updated after the restart' },
      );
      expect(isApprovalCard(shown)).toBe(false);
      expect(toolMessages(1)).toEqual(['Created note #1.']);
      expect(await approvalStatus()).toEqual(['executed']);
    });

    it('during a slow tool: after the restart the outcome is reported unknown, in the thread and the audit log, and the call is not re-run', async () => {
      let bot = await f.start();
      await approveSlowPost(f, bot, held, 'I could not confirm the post.');
      expect(await approvalStatus()).toEqual(['executing']);
      await bot.kill();

      bot = await f.start();
      await f.waitForText((text) => text.includes('whether it finished is unknown'));
      await f.waitForText((text) => text === 'I could not confirm the post.');
      expect(toolMessages(1)?.[0]).toContain('outcome of this tool call is unknown');
      expect(
        f.slack.callsTo('chat.postMessage').filter((call) => call.params.channel === SLOW_CHANNEL),
      ).toHaveLength(1);
      const kinds = (await f.query('select kind from audit_events order by seq')).map((row) => row.kind);
      expect(kinds).toContain('tool.outcome_unknown');
    });

    it('after the tool finished, before the next model call: the restart asks the model once more, the tool is not re-run', async () => {
      f.model.enqueue(
        reply.toolCalls([{ name: 'create_note', arguments: { text: 'between' } }]),
        reply.hang(),
      );
      let bot = await f.start();
      await f.mention(bot, 'note between');
      const [card] = await f.waitForCards(1);
      if (!card) throw new Error('no card');
      await f.click(bot, card, 'approve', 'U2');
      await f.model.waitForRequests(2, 15_000);
      await bot.kill();

      f.model.enqueue(reply.text('Noted, once.'));
      bot = await f.start();
      await f.waitForText((text) => text === 'Noted, once.');
      expect(await notes()).toEqual([{ text: 'between' }]);
      expect(toolMessages(2)).toEqual(['Created note #1.']);
      expect(f.model.requests).toHaveLength(3);
    });

    it('while the final answer is being posted: the restart posts it without asking the model again', async () => {
      let first = true;
      f.slack.setResponse('chat.postMessage', async (params) => {
        if (params.text === 'The final answer.' && first) {
          first = false;
          await held.wait;
        }
        return f.slack.defaultReply('chat.postMessage', params);
      });
      f.model.enqueue(reply.text('The final answer.'));
      let bot = await f.start();
      await f.mention(bot, 'a question');
      await f.slack.waitForCall(
        'chat.postMessage',
        (call) => call.params.text === 'The final answer.',
        PROCESS_WAIT_MS,
      );
      await bot.kill();
      const [runId] = await runIds();
      expect(await owedReplies()).toEqual([{ id: `reply:${runId}`, text: 'The final answer.' }]);

      bot = await f.start();
      await waitUntil(async () => (await owedReplies()).length === 0, {
        timeoutMs: 15_000,
        message: 'the answer was never posted',
      });
      expect(f.texts().filter((text) => text === 'The final answer.')).toHaveLength(2);
      expect(f.model.requests).toHaveLength(1);
    });

    it('after Slack posted the final answer, before its answer arrived: the restart finds it in the thread and posts it no second time', async () => {
      let kept = false;
      f.slack.setResponse('chat.postMessage', async (params) => {
        const answer = f.slack.defaultReply('chat.postMessage', params);
        if (params.text === 'Shown once.' && !kept) {
          // Slack has the answer in its thread; the process never hears so.
          kept = true;
          await held.wait;
        }
        return answer;
      });
      f.model.enqueue(reply.text('Shown once.'));
      let bot = await f.start({ OPENAI_STREAM: 'false' });
      await f.mention(bot, 'a question');
      await f.slack.waitForCall(
        'chat.postMessage',
        (call) => call.params.text === 'Shown once.',
        PROCESS_WAIT_MS,
      );
      await bot.kill();
      expect(await owedReplies()).toHaveLength(1);

      bot = await f.start({ OPENAI_STREAM: 'false' });
      await waitUntil(async () => (await owedReplies()).length === 0, {
        timeoutMs: 15_000,
        message: 'the answer was never recorded as shown',
      });
      expect(f.slack.callsTo('chat.postMessage').filter((c) => c.params.text === 'Shown once.')).toHaveLength(
        1,
      );
      expect(f.model.requests).toHaveLength(1);
    });

    it('while a streamed answer is being finished: the restart posts the whole answer', async () => {
      f.slack.setResponse('chat.stopStream', async (params) => {
        await held.wait;
        return f.slack.defaultReply('chat.stopStream', params);
      });
      f.model.enqueue(reply.text('A streamed answer.'));
      let bot = await f.start({ OPENAI_STREAM: 'true' });
      await f.mention(bot, 'a question');
      await f.slack.waitForCall('chat.stopStream', () => true, PROCESS_WAIT_MS);
      await bot.kill();
      const [runId] = await runIds();
      expect(await owedReplies()).toEqual([{ id: `reply:${runId}`, text: 'A streamed answer.' }]);

      f.slack.clearResponse('chat.stopStream');
      bot = await f.start({ OPENAI_STREAM: 'true' });
      await f.waitForText((text) => text === 'A streamed answer.');
      await waitUntil(async () => (await owedReplies()).length === 0, { message: 'the answer stayed owed' });
      expect(f.model.requests).toHaveLength(1);
    });
  });
}
