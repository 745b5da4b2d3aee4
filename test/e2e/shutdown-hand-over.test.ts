import { afterEach, describe, expect, it } from 'vitest';
import { INTERRUPTED, LEFT_TO_ANOTHER_PROCESS } from '../../src/conversations/run-driver.js';
import { reply } from '../support/fake-openai.js';
import type { FakeSlack } from '../support/fake-slack.js';
import { seenMessages } from '../support/slack-messages.js';
import { sleep } from '../support/wait.js';
import { type Harness, startHarness } from './harness.js';

const ANSWER = 'The answer, once.';
/** Short enough for the second process to take the run up quickly. */
const ENV = { RUN_LEASE_MS: '1000' };

/** Every message text the thread shows, streamed or posted, finished or not. */
const shown = (slack: FakeSlack) => seenMessages(slack.calls).map((m) => m.text);

/**
 * A process stopping with a run still waiting for the model after its grace period hands the run over: the model
 * request is abandoned, nothing of it reaches the thread from the stopping process (not the answer, not a notice of
 * a problem), and the process that takes the run up answers once. Before, the database was closed under the run: an
 * answer arriving then was streamed into the thread, its record failed, the thread was told of a problem, and the
 * next process answered again.
 */
describe('shutdown past the grace period', () => {
  const open: Harness[] = [];
  const slacks: FakeSlack[] = [];
  afterEach(async () => {
    for (const h of open.splice(0)) await h.close();
    for (const slack of slacks.splice(0)) await slack.close();
  });

  it('leaves the run to the next process: one answer, no notice of a problem', async () => {
    const first = await startHarness({ env: ENV });
    slacks.push(first.slack);
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    first.model.enqueue({ kind: 'held', until: released, reply: reply.text(ANSWER) });
    await first.mention('a slow question');
    await first.model.waitForRequests(1);

    await first.bot.stop(100);
    // The model answers the stopped process's request now: it must have given up on it.
    release();
    // Before, the stopped process went on with the run against its closed database, retrying its end.
    const settled = await Promise.race([
      first.bot.conversations.idle().then(() => 'idle'),
      sleep(3_000).then(() => 'still driving the run'),
    ]);

    const second = await startHarness({ env: ENV, dbPath: first.dbPath, slack: first.slack });
    open.push(second);
    second.model.enqueue(reply.text(ANSWER));
    await second.waitForText((text) => text === ANSWER);
    await second.bot.conversations.idle();
    await first.model.close();

    expect(shown(first.slack).filter((text) => text.includes(ANSWER))).toHaveLength(1);
    expect(shown(first.slack)).not.toContain(INTERRUPTED);
    expect(second.model.requests).toHaveLength(1);
    expect(settled).toBe('idle');
  });

  it('an answer streamed in part ends with a note that it was interrupted, and the next process answers in full', async () => {
    const streamed = { ...ENV, OPENAI_STREAM: 'true' };
    const first = await startHarness({ env: streamed });
    slacks.push(first.slack);
    const part = `${'The first part of a long answer. '.repeat(12)}`;
    first.model.enqueue(reply.streamThenHang(part));
    await first.mention('a long question');
    await first.slack.waitForCall('chat.startStream', () => true);

    await first.bot.stop(100);
    const second = await startHarness({ env: streamed, dbPath: first.dbPath, slack: first.slack });
    open.push(second);
    second.model.enqueue(reply.text(ANSWER));
    await second.waitForText((text) => text === ANSWER);
    await first.model.close();

    const interrupted = shown(first.slack).filter((text) => text.startsWith('The first part'));
    expect(interrupted).toHaveLength(1);
    expect(interrupted[0]?.endsWith(LEFT_TO_ANOTHER_PROCESS)).toBe(true);
    expect(shown(first.slack)).not.toContain(INTERRUPTED);
    expect(second.model.requests).toHaveLength(1);
  });
});
