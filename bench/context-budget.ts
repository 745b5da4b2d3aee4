import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChatModel } from '../src/agent/model.js';
import { insertItems } from '../src/db/run-rows.js';
import { openSqliteDatabase } from '../src/db/sqlite/sqlite-database.js';
import { createStores } from '../src/db/stores.js';
import { contextRunner, isSummaryRequest, scriptedModel } from '../test/integration/context-rig.js';
import { startRun, thread } from '../test/integration/runner-rig.js';
import { requestTokens, startFakeOpenAI } from '../test/support/fake-openai.js';
import { type BenchResult, median, type Row, target } from './report.js';
import { priorItem, storeContext } from './store-fixture.js';

export interface ContextBudgetSize {
  /** Prior items in the thread for the "event → model request" cases, e.g. [10, 1000]. */
  lengths: number[];
  repetitions: number;
  /** Turns of the long conversation whose request sizes are measured. */
  turns: number;
}

/** The window of the long conversation and of the compaction case: a small local model's. */
const SMALL_WINDOW = 6000;
const LARGE_WINDOW = 128_000;

/**
 * What the context budget costs: the time from a run's start to its model request with 10 and 1,000 prior items
 * (counted with the tokenizer when their length alone does not show that they fit), and with a compaction due
 * (the summary call's own time apart); and the tokens each request of a long conversation carries.
 */
export async function benchContextBudget(size: ContextBudgetSize): Promise<BenchResult> {
  const dir = mkdtempSync(join(tmpdir(), 'bot-bench-context-'));
  const db = openSqliteDatabase(join(dir, 'bot.db'));
  const ctx = storeContext(db);
  const on = { stores: createStores(ctx), ctx };
  const model = await startFakeOpenAI();
  let requestAt = 0;
  model.setHandler((request) => {
    if (!isSummaryRequest(request)) requestAt = performance.now();
    return scriptedModel(request);
  });
  let threads = 0;
  const seeded = async (length: number) => {
    threads += 1;
    const conversationId = await on.stores.conversations.findOrCreate(
      { ...thread, threadTs: `${threads}.0` },
      'slack',
    );
    const items = Array.from({ length }, (_, i) => priorItem(i));
    await db.write(function* () {
      yield* insertItems(conversationId, null, null, items, Date.now());
    });
    return conversationId;
  };
  try {
    const toRequest = async (length: number, window: number, label: string): Promise<Row> => {
      const before: number[] = [];
      const summary: number[] = [];
      let summaryMs = 0;
      let first = 0;
      const timed = (inner: ChatModel): ChatModel => ({
        async complete(request) {
          const started = performance.now();
          try {
            return await inner.complete(request);
          } finally {
            summaryMs += performance.now() - started;
          }
        },
      });
      // One runner for the case, as a process has: its token counts of earlier turns are kept.
      const { runner } = contextRunner(on, model, { contextTokens: window, answerPercent: 20 }, timed);
      for (let rep = 0; rep < size.repetitions + 1; rep++) {
        summaryMs = 0;
        const conversationId = await seeded(length);
        const { runId } = await startRun(on.stores.conversations, conversationId, 'What is the codename?');
        const started = performance.now();
        await runner.advance(runId);
        if (rep === 0) {
          // The first run of the case: the tokenizer's tables load (first case only) and nothing is counted yet.
          first = requestAt - started - summaryMs;
          continue;
        }
        before.push(requestAt - started - summaryMs);
        summary.push(summaryMs);
      }
      return {
        case: label,
        metrics: {
          'to model request ms': median(before),
          'first run ms': first,
          'summary call ms': median(summary),
        },
      };
    };
    const rows: Row[] = [];
    for (const length of size.lengths) rows.push(await toRequest(length, LARGE_WINDOW, `${length} items`));
    const longest = size.lengths.at(-1) ?? 0;
    rows.push(await toRequest(longest, SMALL_WINDOW, `${longest} items, compaction due`));
    // The long conversation: the tokens of each request, as the server counts them.
    const { runner } = contextRunner(on, model, { contextTokens: SMALL_WINDOW, answerPercent: 20 });
    const conversationId = await seeded(0);
    const perTurn: number[] = [];
    for (let n = 1; n <= size.turns; n += 1) {
      const sent = model.requests.length;
      const text =
        n === 1
          ? 'FACT: the project codename is BLUEBIRD.'
          : `Message ${n}: the weekly report for team ${n % 7} is attached, with the usual figures.`;
      const { runId } = await startRun(on.stores.conversations, conversationId, text);
      await runner.advance(runId);
      const main = model.requests
        .slice(sent)
        .filter((request) => !isSummaryRequest(request))
        .at(-1);
      perTurn.push(main ? await requestTokens(main) : 0);
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(xs.length, 1);
    const third = Math.floor(size.turns / 3);
    for (const at of [1, 10, 50, 100, 200, size.turns].filter((n) => n <= size.turns)) {
      rows.push({ case: `turn ${at} of ${size.turns}`, metrics: { 'tokens sent': perTurn[at - 1] ?? 0 } });
    }
    rows.push({ case: `largest request of ${size.turns}`, metrics: { 'tokens sent': Math.max(...perTurn) } });
    const small = rows[0]?.metrics['to model request ms'] ?? 0;
    const large = rows[size.lengths.length - 1]?.metrics['to model request ms'] ?? 0;
    return {
      id: 'context-budget',
      title: 'Context budget: time to the model request, and tokens per request of a long conversation',
      rows,
      targets: [
        target(
          `tokens sent, last third vs middle third of ${size.turns} turns`,
          mean(perTurn.slice(2 * third)) / Math.max(mean(perTurn.slice(third, 2 * third)), 1),
          1.2,
          '×',
        ),
        target(
          `largest request of ${size.turns} turns, in a ${SMALL_WINDOW}-token window`,
          Math.max(...perTurn),
          SMALL_WINDOW,
          'tokens',
        ),
        target(`run start → model request, ${longest} vs ${size.lengths[0]} items`, large - small, 50, 'ms'),
      ],
      notes: [
        `medians of ${size.repetitions} runs per case after a first one (shown apart: the tokenizer loads in the first case, and counts of texts seen before are kept); real runner, SQLite stores, the OpenAI client and gpt-tokenizer, against the fake model server on 127.0.0.1`,
        `to model request: from the run's start to the fake model receiving the request, less the summary call's own time (shown apart); ${LARGE_WINDOW}-token window, or ${SMALL_WINDOW} where a compaction is due`,
        'tokens sent: what the fake server counts of each request (o200k_base, with each message and the tools in the chat template)',
      ],
    };
  } finally {
    await model.close();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
