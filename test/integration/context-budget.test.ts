import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeOpenAI, reply, startFakeOpenAI } from '../support/fake-openai.js';
import { openTestStores, type TestStores } from '../support/test-database.js';
import { waitUntil } from '../support/wait.js';
import {
  callsPaired,
  contextRunner,
  isSummaryRequest,
  promptTokensOf,
  scriptedModel,
} from './context-rig.js';
import { startRun, thread } from './runner-rig.js';

/** The window of the model server in these tests: small, as a local model's often is. */
const WINDOW = 6000;
const FIRST = 'FACT: the project codename is BLUEBIRD. Please remember it for later.';

/** The message of turn `n` of the long conversation: mostly chatter, an order looked up now and then. */
function message(n: number): string {
  if (n === 1) return FIRST;
  if (n === 300) return 'What is the codename?';
  if (n % 25 === 0) return `lookup order ${n}`;
  return `Message ${n}: the weekly report for team ${n % 7} is attached, with the usual figures on tickets opened and closed, the backlog and the on-call rota.`;
}

describe('a conversation longer than the model context', () => {
  let t: TestStores;
  let model: FakeOpenAI;
  beforeEach(async () => {
    t = await openTestStores('sqlite');
    model = await startFakeOpenAI();
    model.setContextLimit(WINDOW);
    model.setHandler(scriptedModel);
  });
  afterEach(async () => {
    await model.close();
    await t.close();
  });

  it('300 turns against a server that refuses any request over its window: every turn answered, the first fact kept by the summaries', async () => {
    const { runner } = contextRunner(t, model, { contextTokens: WINDOW, answerPercent: 20 });
    const conversationId = await t.stores.conversations.findOrCreate(thread, 'slack');
    const answers: string[] = [];
    const tokensPerTurn: number[] = [];
    let usage = 0;
    for (let n = 1; n <= 300; n += 1) {
      const before = model.requests.length;
      const { runId } = await startRun(t.stores.conversations, conversationId, message(n));
      const outcome = await runner.advance(runId);
      if (outcome.kind !== 'completed') throw new Error(`turn ${n} ended ${JSON.stringify(outcome)}`);
      answers.push(outcome.text);
      const sent = model.requests.slice(before).filter((request) => !isSummaryRequest(request));
      tokensPerTurn.push(JSON.stringify(sent.at(-1)?.messages ?? []).length);
      usage += await promptTokensOf(t, runId);
    }
    expect(answers.at(-1)).toBe('The codename is BLUEBIRD.');
    const main = model.requests.filter((request) => !isSummaryRequest(request));
    const summaries = model.requests.filter(isSummaryRequest);
    const last = main.at(-1);
    // The first message itself is long gone from what is sent: the summary carried the fact.
    expect(JSON.stringify(last?.messages)).not.toContain(FIRST);
    expect(last?.messages[0]?.content).toContain('Summary of the earlier part of this conversation');
    expect(last?.messages.filter((m) => m.role === 'system')).toHaveLength(1);
    expect(summaries.length).toBeGreaterThan(5);
    const stored = (await t.stores.runs.loadHistory(conversationId)).filter((i) => i.kind === 'summary');
    expect(stored).toHaveLength(summaries.length);
    // Never shown as anyone's words, never a call cut from its output.
    for (const request of main) {
      expect(
        request.messages.filter((m) => m.role === 'user' && String(m.content).includes('Summary of')),
      ).toEqual([]);
      expect(callsPaired(request)).toBe(true);
    }
    expect(model.refused).toEqual([]);
    // Flat once the budget is reached: the last hundred turns send no more than the hundred before them.
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    expect(mean(tokensPerTurn.slice(200))).toBeLessThan(mean(tokensPerTurn.slice(100, 200)) * 1.2);
    // The summary calls count in the runs' usage like every other call (the fake counts 4 characters a token).
    const billed = model.requests.reduce(
      (sum, request) => sum + Math.max(1, Math.ceil(JSON.stringify(request.messages).length / 4)),
      0,
    );
    expect(usage).toBe(billed);
  }, 120_000);

  it('a refusal for length is answered by one compaction and one retry, never by a failure', async () => {
    // The bot believes the model holds 32,000 tokens; the server holds 6,000 and says so when it refuses.
    const { runner } = contextRunner(t, model, { contextTokens: 32_000, answerPercent: 20 });
    const conversationId = await t.stores.conversations.findOrCreate(thread, 'slack');
    for (let n = 1; n <= 120; n += 1) {
      const { runId } = await startRun(t.stores.conversations, conversationId, message(n === 120 ? 300 : n));
      const outcome = await runner.advance(runId);
      expect(outcome.kind, `turn ${n}`).toBe('completed');
      if (n === 120) expect(outcome).toEqual({ kind: 'completed', text: 'The codename is BLUEBIRD.' });
    }
    // Refused once: the limit the server named is kept, so later requests fit at once.
    expect(model.refused).toHaveLength(1);
    expect(model.requests.filter(isSummaryRequest).length).toBeGreaterThan(1);
  }, 60_000);

  it('a process that dies while the summary is written leaves the history readable; the next process writes it again', async () => {
    const settings = { contextTokens: WINDOW, answerPercent: 20 };
    const conversationId = await t.stores.conversations.findOrCreate(thread, 'slack');
    const first = contextRunner(t, model, settings).runner;
    let dying = new AbortController();
    let dyingDrive: Promise<unknown> = Promise.resolve();
    let n = 1;
    // Until the history no longer fits: the next turn needs a summary.
    for (; model.requests.filter(isSummaryRequest).length === 0; n += 1) {
      const { runId } = await startRun(t.stores.conversations, conversationId, message(n));
      await first.advance(runId);
    }
    const summariesBefore = (await t.stores.runs.loadHistory(conversationId)).filter(
      (i) => i.kind === 'summary',
    );
    // Go on until the next summary is due, with the summary request left hanging.
    model.setHandler((request) => (isSummaryRequest(request) ? reply.hang() : scriptedModel(request)));
    let hung: string | undefined;
    for (; hung === undefined; n += 1) {
      const summaryRequests = model.requests.filter(isSummaryRequest).length;
      const { runId } = await startRun(t.stores.conversations, conversationId, message(n));
      dying = new AbortController();
      const drive = first.advance(runId, {}, dying.signal);
      await waitUntil(async () => {
        const run = await t.stores.runs.getRun(runId);
        return (
          run?.status === 'completed' || model.requests.filter(isSummaryRequest).length > summaryRequests
        );
      });
      if ((await t.stores.runs.getRun(runId))?.status === 'completed') await drive;
      else {
        hung = runId;
        dyingDrive = drive;
      }
    }
    // The process is gone; another takes the run over, and finds the history as it was.
    const restarted = await t.another({ ownerIsGone: (owner) => owner === t.ctx.owner });
    const history = await restarted.stores.runs.loadHistory(conversationId);
    expect(history.filter((i) => i.kind === 'summary')).toEqual(summariesBefore);
    model.setHandler(scriptedModel);
    const claimed = await restarted.stores.recovery.claimAbandonedRuns({ surface: 'slack' });
    expect(claimed.map((c) => c.runId)).toEqual([hung]);
    const outcome = await contextRunner(restarted, model, settings).runner.advance(hung);
    expect(outcome.kind).toBe('completed');
    const after = (await restarted.stores.runs.loadHistory(conversationId)).filter(
      (i) => i.kind === 'summary',
    );
    expect(after).toHaveLength(summariesBefore.length + 1);
    const { runId } = await startRun(restarted.stores.conversations, conversationId, message(300));
    expect(await contextRunner(restarted, model, settings).runner.advance(runId)).toEqual({
      kind: 'completed',
      text: 'The codename is BLUEBIRD.',
    });
    // The dead process's request ends at last: it finds the run driven by another and writes nothing.
    dying.abort();
    expect(await dyingDrive).toEqual({ kind: 'handed_over' });
  }, 60_000);
});
