import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/agent/runner.js';
import { reply } from '../support/fake-openai.js';
import { rows } from './db-rows.js';
import { type Harness, startHarness } from './harness.js';

/** Approves the `n`th card once it appears. */
async function approveCard(h: Harness, n: number): Promise<void> {
  const card = (await h.waitForCards(n))[n - 1];
  if (!card) throw new Error(`card ${n} missing`);
  await h.click(card, 'approve', 'U2');
}

describe('run bounds hold across pauses and resumes (default limits)', () => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  it(`maxTurns (${DEFAULT_LIMITS.maxTurns}) counts every model call of the run, however many resumes`, async () => {
    h = await startHarness();
    const rounds = DEFAULT_LIMITS.maxTurns / 2;
    for (let i = 1; i <= rounds; i++) {
      h.model.enqueue(
        reply.toolCalls([{ name: 'create_note', arguments: { text: `note ${i}` } }]),
        reply.toolCalls([{ name: 'list_notes', arguments: {} }]),
      );
    }
    h.model.enqueue(reply.text('never reached'));
    await h.mention('keep going');
    // Each round: a paused call, a resume, then a call that runs at once: two model calls per resume.
    for (let i = 1; i <= rounds; i++) await approveCard(h, i);
    const stop =
      'I stopped because the run reached its limit of 10 model calls; please ask again, more narrowly.';
    await h.waitForText((text) => text === stop);
    expect(h.model.requests).toHaveLength(DEFAULT_LIMITS.maxTurns);
    expect(h.texts()).toEqual([stop]);
    expect(await rows(h.database, 'SELECT status, turn, error FROM runs')).toEqual([
      { status: 'failed', turn: 10, error: 'the run reached its limit of 10 model calls' },
    ]);
  });

  it(`approval rounds are bounded (${DEFAULT_LIMITS.maxApprovalRounds} per run) and the thread is told in one sentence`, async () => {
    h = await startHarness();
    const limit = DEFAULT_LIMITS.maxApprovalRounds;
    for (let i = 1; i <= limit + 1; i++)
      h.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: `n${i}` } }]));
    await h.mention('add many notes, one at a time');
    for (let i = 1; i <= limit; i++) await approveCard(h, i);
    const stop =
      'I stopped because the run reached its limit of 5 approval rounds; please ask again, more narrowly.';
    await h.waitForText((text) => text === stop);
    expect(h.cards()).toHaveLength(limit);
    expect(h.model.requests).toHaveLength(limit + 1);
    expect(h.texts()).toEqual([stop]);
    expect(await rows(h.database, 'SELECT COUNT(*) AS n FROM notes')).toEqual([{ n: limit }]);
    expect(await rows(h.database, 'SELECT status FROM runs')).toEqual([{ status: 'failed' }]);
  });
});
