import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import { seenMessages } from '../support/slack-messages.js';
import { eventEnvelope, nextTs, postEvent } from '../support/slack-requests.js';
import { waitUntil } from '../support/wait.js';
import { SECRET } from './harness.js';
import { type ProcessFixture, startProcessFixture } from './process-fixture.js';

/**
 * Two real bot processes (each with its worker thread, as `npm start` runs) on one database: the stop button's
 * event reaches the process that does not drive the run, and the one that does stops it.
 */
describe('a stop delivered to another process', () => {
  let f: ProcessFixture;
  beforeEach(async () => {
    f = await startProcessFixture({ kind: 'postgres' });
  });
  afterEach(async () => {
    await f.close();
  });

  it('is recorded in the database and honoured by the process driving the run', async () => {
    const [driver, other] = await Promise.all([f.start(), f.start()]);
    f.model.enqueue(reply.hang());
    const ts = await f.mention(driver, 'think hard');
    await f.model.waitForRequests(1, 10_000);

    const stop = eventEnvelope({
      type: 'agent_session_stopped',
      channel: 'C1',
      thread_ts: ts,
      user: 'U0STOPPER',
      streaming_message_ts: [],
      event_ts: nextTs(),
    });
    expect((await postEvent(`${other.url}/slack/events`, SECRET, stop)).status).toBe(200);
    const said = await waitUntil(
      () =>
        seenMessages(f.slack.calls).find((m) => m.finished && m.text.startsWith('Stopped by <@U0STOPPER>')),
      { timeoutMs: 10_000, message: 'the driver did not stop the run' },
    );
    expect(said.threadTs).toBe(ts);
    const [cancelled] = await f.query("select actor from audit_events where kind = 'run.cancelled'");
    expect(cancelled?.actor).toBe('U0STOPPER');
    await f.slack.waitForCall(
      'agents.sessions.setStatus',
      (c) => c.params.thread_ts === ts && c.params.status === 'active',
      10_000,
    );
    expect(f.model.requests).toHaveLength(1);
  });
});
