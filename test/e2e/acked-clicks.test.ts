import { describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import { slackReply } from '../support/fake-slack.js';
import { DATABASE_KINDS } from '../support/test-database.js';
import { waitUntil } from '../support/wait.js';
import { cardTs } from './harness.js';
import { writePolicy } from './policy-support.js';
import { type Latch, type ProcessFixture, useProcessFixture } from './process-fixture.js';

const CLICKS = 5;
const GROUP = 'S0REVIEW';

/**
 * Slack never delivers a click again once it was answered 200. Five Approve clicks are acknowledged, then the
 * process is killed before it can decide them (deciding asks Slack for the approvers' user group, and that
 * answer is held until the kill): the next process decides all five, the cards change, the runs finish, and
 * no tool runs twice.
 */
describe.each(DATABASE_KINDS)('acknowledged clicks survive a crash, on %s', { timeout: 60_000 }, (kind) => {
  let f: ProcessFixture;
  let held: Latch;
  useProcessFixture(
    (fixture, latch) => {
      f = fixture;
      held = latch;
    },
    { kind },
  );

  it('five clicks acked, the process SIGKILLed before deciding: a restart decides all five, each tool runs once', async () => {
    const policy = { APPROVAL_POLICY_FILE: writePolicy({ tools: { create_note: { approvers: [GROUP] } } }) };
    let holding = true;
    f.slack.setResponse('usergroups.users.list', async () => {
      if (holding) await held.wait;
      return slackReply.ok({ users: ['U2'] });
    });
    for (let n = 1; n <= CLICKS; n += 1)
      f.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: `note ${n}` } }]));
    let bot = await f.start(policy);
    for (let n = 1; n <= CLICKS; n += 1) await f.mention(bot, `note ${n}`);
    const cards = await f.waitForCards(CLICKS);
    // A card Slack has shown but the bot has not yet recorded is posted again after a crash (a new ts): wait
    // until all five are recorded, so the updates this test expects go to these cards.
    await waitUntil(
      async () =>
        (await f.query('select id from approvals where message_ts is not null')).length === CLICKS
          ? true
          : undefined,
      { timeoutMs: 15_000, message: 'the cards were not recorded' },
    );
    for (let n = 1; n <= CLICKS; n += 1) f.model.enqueue(reply.text('Saved.'));

    const statuses = await Promise.all(cards.map((card) => f.click(bot, card, 'approve', 'U2')));
    expect(statuses.map((response) => response.status)).toEqual(cards.map(() => 200));
    // Deciding has started (it waits for the group's members) and nothing is decided yet.
    await f.slack.waitForCall('usergroups.users.list', () => true, 15_000);
    expect(await f.query("select id from approvals where status = 'pending'")).toHaveLength(CLICKS);
    expect(await bot.kill('SIGKILL')).toBeNull();

    holding = false;
    bot = await f.start(policy);
    await waitUntil(
      () => (f.texts().filter((text) => text === 'Saved.').length === CLICKS ? true : undefined),
      {
        timeoutMs: 30_000,
        message: `expected ${CLICKS} answers; got ${JSON.stringify(f.texts())}`,
      },
    );
    const notes = await f.query('select text from notes order by text');
    expect(notes.map((row) => row.text)).toEqual(cards.map((_, index) => `note ${index + 1}`));
    const approvals = await f.query('select status, decided_by from approvals');
    expect(approvals).toEqual(cards.map(() => ({ status: 'executed', decided_by: 'U2' })));
    for (const card of cards)
      await f.slack.waitForCall('chat.update', (call) => call.params.ts === cardTs(card), 15_000);
    expect(
      await f.query('select key from accepted_requests where click is not null and decided_at is null'),
    ).toEqual([]);
  });
});
