import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConversationService } from '../../src/conversations/conversation-service.js';
import { LandedCardUpdates } from '../../src/conversations/landed-card-updates.js';
import type { ThreadSurface } from '../../src/conversations/surface-ports.js';
import { randomId } from '../../src/ids.js';
import { silentLogger } from '../../src/logger.js';
import { openTestStores, type TestStores } from '../support/test-database.js';
import { answer, createTestRunner, scripted, thread } from './runner-rig.js';

describe('a message the database cannot take', () => {
  let t: TestStores;
  beforeEach(async () => {
    t = await openTestStores('sqlite');
  });
  afterEach(() => t.close());

  it('is answered with one sentence saying so, and the next message works', async () => {
    const said: string[] = [];
    const surface: ThreadSurface = {
      postText: async (_thread, text) => void said.push(text),
      postApprovalCard: async () => ({ channelId: 'C1', messageTs: '1.1' }),
      updateApprovalCard: async () => {},
    };
    let failing = true;
    const store = {
      ...t.stores.conversations,
      receiveMessage: (input: Parameters<typeof t.stores.conversations.receiveMessage>[0]) =>
        failing
          ? Promise.reject(new Error('SQLITE_BUSY: database is locked'))
          : t.stores.conversations.receiveMessage(input),
    };
    const service = new ConversationService({
      store,
      outbox: t.stores.deliveries,
      recovery: t.stores.recovery,
      runs: t.stores.runs,
      runner: createTestRunner(t, { model: scripted([answer('Hello again.')]), tools: [] }),
      surface,
      surfaceKind: 'slack',
      clock: t.ctx.clock,
      newId: randomId,
      logger: silentLogger,
      leaseMs: 30_000,
      maxActiveRuns: 32,
      deliveryRetryMs: 30_000,
      landedCardUpdates: new LandedCardUpdates(t.stores.deliveries, silentLogger),
    });
    const message = { ...thread, userId: 'U1', text: 'hello', messageTs: '2.0' };
    await service.handleMessage(message);
    expect(said).toEqual([
      'I could not start working on this because of a problem on my side; please send it again.',
    ]);
    failing = false;
    await service.handleMessage({ ...message, messageTs: '3.0' });
    await service.idle();
    expect(said.at(-1)).toBe('Hello again.');
  });
});
