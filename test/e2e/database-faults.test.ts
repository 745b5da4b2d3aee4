import { afterEach, describe, expect, it } from 'vitest';
import { type DatabaseOutage, failingStores } from '../support/failing-stores.js';
import { reply } from '../support/fake-openai.js';
import { waitUntil } from '../support/wait.js';
import { rows } from './db-rows.js';
import { cardTs, type Harness, isApprovalCard, startHarness } from './harness.js';

/** The database goes away while a run waits on the model, and comes back after the run's lease ran out. */
describe('a database outage at the end of a run', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it.each([{ stream: 'true' }, { stream: 'false' }])(
    'posts the answer once and never asks the model for it again (OPENAI_STREAM=$stream)',
    async ({ stream }) => {
      const outage: DatabaseOutage = { down: false, calls: [], refused: [] };
      const started = await startHarness({
        env: { OPENAI_STREAM: stream, RUN_LEASE_MS: '1000' },
        overrides: { deliveryRetryMs: 100, stores: (stores) => failingStores(stores, outage) },
      });
      h = started;
      let answerNow = () => {};
      const answered = new Promise<void>((resolve) => {
        answerNow = resolve;
      });
      started.model.setHandler(async () => {
        await answered;
        return reply.text('The answer is 42.');
      });
      await started.mention('what is the answer?');
      await started.model.waitForRequests(1);
      outage.down = true;
      answerNow();
      // The outage outlasts the run's lease (1 s): recovery, every 100 ms, is refused 15 times meanwhile.
      await waitUntil(() => outage.refused.filter((call) => call === 'deliveries.takeDue').length >= 15, {
        timeoutMs: 15_000,
      });
      outage.down = false;

      await started.waitForText((text) => text === 'The answer is 42.');
      // Recovery looks for abandoned runs several times after the database is back: it finds none to re-drive.
      const back = outage.calls.length;
      await waitUntil(
        () => outage.calls.slice(back).filter((call) => call === 'recovery.claimAbandonedRuns').length >= 5,
        { timeoutMs: 10_000 },
      );
      expect(started.model.requests).toHaveLength(1);
      expect(started.texts()).toEqual(['The answer is 42.']);
      expect(await rows(started.database, 'select status from runs')).toEqual([{ status: 'completed' }]);
      expect(await rows(started.database, 'select id from deliveries')).toEqual([]);
    },
  );
});

/** The database goes away just as Slack accepts a card, so the card is in its thread but not recorded. */
describe('a database outage right after a card is posted', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('records the card found in its thread once the database is back: no second card, no false notice', async () => {
    const outage: DatabaseOutage = { down: false, calls: [], refused: [] };
    const started = await startHarness({
      env: { RUN_LEASE_MS: '1000' },
      overrides: { deliveryRetryMs: 100, stores: (stores) => failingStores(stores, outage) },
    });
    h = started;
    started.slack.setResponse('chat.postMessage', (params) => {
      if (isApprovalCard({ method: 'chat.postMessage', params, at: 0 })) outage.down = true;
      return started.slack.defaultReply('chat.postMessage', params);
    });
    started.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'recorded late' } }]),
      reply.text('Saved.'),
    );
    await started.mention('note recorded late');
    await waitUntil(() => outage.refused.includes('deliveries.cardPosted'), { timeoutMs: 10_000 });
    outage.down = false;

    const [card] = await started.waitForCards(1);
    if (!card) throw new Error('no card');
    await waitUntil(
      async () =>
        (await rows(started.database, 'select message_ts from approvals'))[0]?.message_ts === cardTs(card),
      { timeoutMs: 10_000, message: 'the card found and recorded' },
    );
    expect(started.cards()).toHaveLength(1);
    expect(started.slack.callsTo('conversations.replies').at(-1)?.params).toMatchObject({
      channel: card.params.channel,
      ts: card.params.thread_ts,
      include_all_metadata: 'true',
    });
    expect((await started.click(card, 'approve', 'U2')).status).toBe(200);
    await started.waitForText((text) => text === 'Saved.');
    expect(started.texts().filter((text) => text.includes('could not post the approval card'))).toEqual([]);
    expect(started.cards()).toHaveLength(1);
  });
});

/** The database refuses the decision of an acknowledged Approve click once; the click stays recorded. */
describe('a database error while an acknowledged click is decided', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('decides the click once the database takes it, and never tells the person that nothing changed', async () => {
    // Refused live, then once more when picked up: the person hears of it once.
    let refusals = 2;
    const started = await startHarness({
      env: { RUN_LEASE_MS: '1000' },
      overrides: {
        deliveryRetryMs: 100,
        stores: (stores) => ({
          ...stores,
          approvals: {
            ...stores.approvals,
            vote: (input) =>
              refusals-- > 0
                ? Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'))
                : stores.approvals.vote(input),
          },
        }),
      },
    });
    h = started;
    started.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'decided late' } }]),
      reply.text('Saved.'),
    );
    await started.mention('note decided late');
    const [card] = await started.waitForCards(1);
    if (!card) throw new Error('no card');

    expect((await started.click(card, 'approve', 'U2')).status).toBe(200);
    const told = await started.slack.waitForCall('chat.postEphemeral', (c) => c.params.user === 'U2');
    // The click is kept and decided once the database takes it: telling the person that nothing changed (and
    // to click again) would be untrue, and the call would run after they were told it would not.
    expect(String(told.params.text)).not.toMatch(/nothing changed|click again/i);
    await started.waitForText((text) => text === 'Saved.');
    expect(await rows(started.database, 'select text from notes')).toEqual([{ text: 'decided late' }]);
    expect(await rows(started.database, 'select status, decided_by from approvals')).toEqual([
      { status: 'executed', decided_by: 'U2' },
    ]);
    expect(
      await rows(
        started.database,
        'select key from accepted_requests where click is not null and decided_at is null',
      ),
    ).toEqual([]);
    // Told once: the failure, then nothing more (the card shows the decision).
    expect(started.slack.callsTo('chat.postEphemeral')).toHaveLength(1);
  });
});

/** The database refuses one write just after a run's end was stored, as its streamed answer is being finished. */
describe('a database error as a streamed answer is finished', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it.each(['takeReply', 'replyPosted'] as const)(
    'finishes the stream and writes the answer off: it shows once, never posted again (%s refused once)',
    async (refusedWrite) => {
      let refused = 0;
      const started = await startHarness({
        env: { OPENAI_STREAM: 'true', RUN_LEASE_MS: '1000' },
        overrides: {
          deliveryRetryMs: 100,
          stores: (stores) => ({
            ...stores,
            deliveries: {
              ...stores.deliveries,
              [refusedWrite]: (runId: string) =>
                refused++ === 0
                  ? Promise.reject(new Error('SQLITE_BUSY: database is locked'))
                  : stores.deliveries[refusedWrite](runId),
            },
          }),
        },
      });
      h = started;
      started.model.enqueue(reply.text('The answer is 42.'));
      await started.mention('what is the answer?');
      await started.waitForText((text) => text === 'The answer is 42.');
      await waitUntil(
        async () =>
          (await rows(started.database, 'select id from deliveries')).length === 0 ? true : undefined,
        { timeoutMs: 10_000, message: 'the answer is still owed' },
      );
      await started.bot.conversations.idle();
      expect(refused).toBeGreaterThan(0);
      expect(started.texts()).toEqual(['The answer is 42.']);
    },
  );
});
