import { benchClickAck, type ClickAckSize } from './click-ack.js';
import { benchConsole, type ConsoleSize } from './console.js';
import { benchContextBudget, type ContextBudgetSize } from './context-budget.js';
import { benchDecisions, type DecisionsSize } from './decisions.js';
import { benchGrowth, type GrowthSize } from './growth.js';
import { benchMemory, type MemorySize } from './memory.js';
import { benchPauseResume, type PauseResumeSize } from './pause-resume.js';
import type { BenchResult } from './report.js';
import { benchSdkCompare, type SdkCompareSize } from './sdk-compare.js';
import { benchStartup, type StartupSize } from './startup.js';
import { benchToolOutput, type ToolOutputSize } from './tool-output.js';
import { benchTurnOverhead, type TurnOverheadSize } from './turn-overhead.js';

export interface SuiteSizes {
  clickAck: ClickAckSize;
  turnOverhead: TurnOverheadSize;
  pauseResume: PauseResumeSize;
  sdkCompare: SdkCompareSize;
  decisions: DecisionsSize;
  memory: MemorySize;
  startup: StartupSize;
  console: ConsoleSize;
  toolOutput: ToolOutputSize;
  contextBudget: ContextBudgetSize;
  growth: GrowthSize;
}

/** The sizes of `npm run bench` (a few minutes on 2 cores). */
export const FULL_SIZES: SuiteSizes = {
  clickAck: { concurrencies: [1, 10, 100], samples: 300 },
  turnOverhead: { turns: 300 },
  pauseResume: { lengths: [10, 100, 1000], repetitions: 30 },
  sdkCompare: { lengths: [10, 100, 1000], repetitions: 20 },
  decisions: { approvals: 1000, writers: [1, 10] },
  memory: { threads: 1000 },
  startup: { starts: 5 },
  // A million audit events take minutes to write on 2 cores: opt in with BENCH_CONSOLE=full.
  console: {
    pending: 10_000,
    events: process.env.BENCH_CONSOLE === 'full' ? 1_000_000 : 200_000,
    samples: 100,
    concurrency: 4,
    clickConcurrency: 10,
    clicks: 300,
    loadLanes: 4,
  },
  toolOutput: { outputs: [20_000, 2_000_000], repetitions: 5 },
  contextBudget: { lengths: [10, 1000], repetitions: 10, turns: 300 },
  // A million audit events take minutes to seed and to read on 2 cores: opt in with BENCH_GROWTH=full.
  growth: {
    events: process.env.BENCH_GROWTH === 'full' ? [10_000, 100_000, 1_000_000] : [10_000, 100_000],
    pending: [1_000, 10_000],
    // The stats and charts reads take seconds each at 100,000 events on a busy machine: 10 samples each.
    samples: 10,
    decisions: 200,
    clickConcurrency: 10,
    clickRounds: 5,
  },
};

/** Each benchmark once at a tiny size: the smoke test that keeps the bench from rotting. */
export const SMOKE_SIZES: SuiteSizes = {
  clickAck: { concurrencies: [1, 3], samples: 3 },
  turnOverhead: { turns: 3 },
  pauseResume: { lengths: [2, 8], repetitions: 2 },
  sdkCompare: { lengths: [2, 100], repetitions: 1 },
  decisions: { approvals: 6, writers: [1, 3] },
  memory: { threads: 3 },
  startup: { starts: 1 },
  console: {
    pending: 12,
    events: 60,
    samples: 3,
    concurrency: 2,
    clickConcurrency: 3,
    clicks: 3,
    loadLanes: 2,
  },
  toolOutput: { outputs: [20_000], repetitions: 1 },
  contextBudget: { lengths: [2, 20], repetitions: 1, turns: 3 },
  growth: {
    events: [60, 120],
    pending: [10, 20],
    samples: 2,
    decisions: 3,
    clickConcurrency: 2,
    clickRounds: 1,
  },
};

export interface SuiteOptions {
  /**
   * A PostgreSQL server's URL (a role that may `create database`): the PostgreSQL rows create a fresh database
   * on it per case and drop it after. `npm run bench` starts one (see bench/postgres.ts), the smoke test
   * passes vitest's.
   */
  postgresUrl: string;
  /** Sees each benchmark as soon as it is done. */
  onResult?: (result: BenchResult) => void;
  /** Only these benchmarks (by id, e.g. `click-ack`); all when empty or absent. */
  only?: readonly string[];
}

/** The benchmarks' ids, in the order they run. */
export const BENCHMARK_IDS = [
  'click-ack',
  'turn-overhead',
  'pause-resume',
  'sdk-compare',
  'decisions',
  'memory',
  'startup',
  'console',
  'tool-output',
  'context-budget',
  'growth',
] as const;

/** Every benchmark in order. */
export async function runSuite(sizes: SuiteSizes, options: SuiteOptions) {
  const { postgresUrl, onResult = () => {}, only = [] } = options;
  const steps: Record<(typeof BENCHMARK_IDS)[number], () => Promise<BenchResult>> = {
    'click-ack': () => benchClickAck(sizes.clickAck, postgresUrl),
    'turn-overhead': () => benchTurnOverhead(sizes.turnOverhead),
    'pause-resume': () => benchPauseResume(sizes.pauseResume),
    'sdk-compare': () => benchSdkCompare(sizes.sdkCompare),
    decisions: () => benchDecisions(sizes.decisions, postgresUrl),
    memory: () => benchMemory(sizes.memory),
    startup: () => benchStartup(sizes.startup),
    console: () => benchConsole(sizes.console),
    'tool-output': () => benchToolOutput(sizes.toolOutput),
    'context-budget': () => benchContextBudget(sizes.contextBudget),
    growth: () => benchGrowth(sizes.growth, postgresUrl),
  };
  const results: BenchResult[] = [];
  for (const id of BENCHMARK_IDS) {
    if (only.length > 0 && !only.includes(id)) continue;
    const result = await steps[id]();
    onResult(result);
    results.push(result);
  }
  return results;
}
