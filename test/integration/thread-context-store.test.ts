import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HistoryItem } from '../../src/agent/history.js';
import { leaseOf } from '../../src/agent/ports.js';
import { initialRunState } from '../../src/agent/run-state.js';
import { randomId } from '../../src/ids.js';
import { openTestStores, type TestStores } from '../support/test-database.js';

const thread = { teamId: 'T1', channelId: 'C1', threadTs: '1.0' };
const context: HistoryItem = {
  kind: 'thread_context',
  data: { messages: [{ ts: '0.5', author: '<@U5>', text: 'earlier' }] },
};

describe('stores for what people see', () => {
  let t: TestStores;
  beforeEach(async () => {
    t = await openTestStores('sqlite');
  });
  afterEach(() => t.close());

  it('stores thread context before the first message only, never once the conversation has history', async () => {
    const { conversations, runs } = t.stores;
    const conversationId = await conversations.findOrCreate(thread, 'slack');
    const start = async (text: string, ts: string) => {
      const runId = randomId('run');
      const started = await conversations.startRunOrQueue({
        conversationId,
        runId,
        message: { ...thread, userId: 'U1', text, messageTs: ts },
        state: initialRunState(),
        audit: [],
        context,
      });
      expect(started).toBe('started');
      await runs.finishRun(leaseOf((await runs.getRun(runId)) ?? { id: runId, leaseToken: null }), {
        status: 'completed',
        error: null,
        audit: [],
        cancelAudit: () => {
          throw new Error('nothing to cancel');
        },
      });
    };
    await start('first', '1.1');
    await start('second', '1.2');
    expect((await runs.loadHistory(conversationId)).map((item) => item.kind)).toEqual([
      'thread_context',
      'user_message',
      'user_message',
    ]);
  });

  it('greets a person once: the first claim wins, a released claim can be taken again', async () => {
    const { greetings } = t.stores;
    expect(await greetings.claim('T1', 'U1', 1)).toBe(true);
    expect(await greetings.claim('T1', 'U1', 2)).toBe(false);
    expect(await greetings.claim('T2', 'U1', 3)).toBe(true);
    await greetings.release('T1', 'U1');
    expect(await greetings.claim('T1', 'U1', 4)).toBe(true);
  });
});
