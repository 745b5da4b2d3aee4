import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HistoryItem } from '../../src/agent/history.js';
import { initialRunState } from '../../src/agent/run-state.js';
import { createConversationStore } from '../../src/db/conversation-store.js';
import { type OpenDatabase, openDatabase } from '../../src/db/database.js';
import { createGreetingStore } from '../../src/db/greeting-store.js';
import { createRunStore } from '../../src/db/run-store.js';
import { randomId } from '../../src/ids.js';

const clock = { now: () => Date.now() };
const thread = { teamId: 'T1', channelId: 'C1', threadTs: '1.0' };
const context: HistoryItem = {
  kind: 'thread_context',
  data: { messages: [{ ts: '0.5', author: '<@U5>', text: 'earlier' }] },
};

describe('stores for what people see', () => {
  let database: OpenDatabase;
  beforeEach(() => {
    database = openDatabase(':memory:');
  });
  afterEach(() => database.close());

  it('stores thread context before the first message only, never once the conversation has history', () => {
    const conversations = createConversationStore(database.db, clock, randomId);
    const runs = createRunStore(database.db, clock);
    const conversationId = conversations.findOrCreate(thread);
    const start = (text: string, ts: string) => {
      const runId = randomId('run');
      conversations.startRunOrQueue({
        conversationId,
        runId,
        message: { ...thread, userId: 'U1', text, messageTs: ts },
        state: initialRunState(),
        audit: [],
        context,
      });
      runs.finishRun({
        runId,
        status: 'completed',
        error: null,
        audit: [],
        cancelAudit: () => {
          throw new Error('nothing to cancel');
        },
      });
    };
    start('first', '1.1');
    start('second', '1.2');
    expect(runs.loadHistory(conversationId).map((item) => item.kind)).toEqual([
      'thread_context',
      'user_message',
      'user_message',
    ]);
  });

  it('greets a person once: the first claim wins, a released claim can be taken again', () => {
    const greetings = createGreetingStore(database.db);
    expect(greetings.claim('T1', 'U1', 1)).toBe(true);
    expect(greetings.claim('T1', 'U1', 2)).toBe(false);
    expect(greetings.claim('T2', 'U1', 3)).toBe(true);
    greetings.release('T1', 'U1');
    expect(greetings.claim('T1', 'U1', 4)).toBe(true);
  });
});
