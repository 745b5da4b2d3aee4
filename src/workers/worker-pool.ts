import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Worker } from 'node:worker_threads';
import { outOfConsoleReach } from '../console/console-reach.js';
import type { RunWork } from '../conversations/run-work.js';
import type { ThreadRef } from '../conversations/surface-ports.js';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import { processOutput } from '../output-streams.js';
import type { ClickWork } from '../slack/clicks/click.js';
import { createConsoleRelay } from './console-relay.js';
import {
  type FromWorker,
  isFromWorker,
  type PassedOnWork,
  type ThreadMemory,
  type ToWorker,
  type WorkerData,
} from './protocol.js';
import { doesBackground, servesConsole, workerRoles } from './worker-roles.js';

/** The worker threads of a process, to which the intake thread hands the work after each request. */
export interface WorkerPool extends RunWork, ClickWork {
  /** Asks the worker doing the background work to check approval deadlines now (tests). */
  checkDeadlines(): Promise<void>;
  /** Lets the work in flight finish (bounded by `graceMs`), then ends the workers. */
  stop(graceMs: number): Promise<void>;
  /** A reloaded approval policy (its validated text) for the calls every worker plans from now on. */
  reloadPolicy(text: string): void;
  /** Workers started and ready for work now (the console's included), for /healthz. */
  running(): number;
  /**
   * Each ready worker's JavaScript memory (one still starting, or not answering within a second, is left out,
   * so /healthz never waits on a worker that loads its code).
   */
  memory(): Promise<ThreadMemory[]>;
  /** The web console's requests, relayed to the worker that serves the console (see console-relay.ts). */
  console(req: IncomingMessage, res: ServerResponse): void;
}

/**
 * A worker's old generation, in MiB. Runs keep little alive (their state is in the database), so the heap stays
 * small and V8 collects instead of growing; a worker that still runs out is started again and its runs are
 * taken over through their leases, while the thread answering Slack goes on.
 */
const WORKER_HEAP_MB = 128;

/** The worker thread's entry (src/worker-thread.ts), compiled; under tsx (development) the TypeScript one, with tsx inherited. */
const ENTRY = new URL(
  import.meta.url.endsWith('.ts') ? '../worker-thread.ts' : '../worker-thread.js',
  import.meta.url,
);

/**
 * Starts `count` run workers and the console's own worker (see worker-roles.ts and worker-thread.ts); work
 * handed over before a worker is ready waits in its queue. Work is routed by thread over the run workers, so one
 * conversation's work stays in one worker, in order. A worker that dies is started again; what it was driving
 * is taken over through the run's lease like any stopped work, and the console requests it was answering fail
 * with a 503.
 */
export function startWorkerPool(
  count: number,
  data: Omit<WorkerData, 'role'>,
  logger: Logger,
  entry: URL = ENTRY,
): WorkerPool {
  let stopping = false;
  const output = processOutput();
  // A worker started again after a reload builds the policy in force, not whatever the file holds by then.
  let policyText = data.policyText;
  const roles = workerRoles(count);
  const consoleWorker = roles.findIndex(servesConsole);
  const backgroundWorker = roles.findIndex(doesBackground);
  const workers: Worker[] = [];
  const ready: boolean[] = [];
  const listeners = new Set<(index: number, message: FromWorker) => void>();
  // Messages and clicks handed to each worker and not yet stored or decided by it: Slack has its ack, so a
  // worker that dies first (or fails to start) must not take them along. Its successor gets them again; a
  // message's dedupe keys make a second delivery of one already stored a no-op, and a click decided just before
  // is answered as any second click is ("already approved by you").
  let handedOver = 0;
  const untaken = roles.map(() => new Map<number, ToWorker>());
  // The console's worker serves it, off the thread that acks Slack's requests and off the run workers.
  const consoleRelay = createConsoleRelay({
    ready: () => ready[consoleWorker] === true,
    post: (message) => post(consoleWorker, message),
    outOfReach: (address) => outOfConsoleReach(data.config.console.publicUrl, address),
  });
  const spawn = (index: number): void => {
    const worker = new Worker(entry, {
      workerData: {
        ...data,
        role: roles[index] ?? 'runs',
        ...(policyText === undefined ? {} : { policyText }),
      } satisfies WorkerData,
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
      // Drained here into the guarded process output: were the process's stderr closed, a worker's writes
      // would otherwise wait for it in the worker's memory.
      stdout: true,
      stderr: true,
    });
    worker.stdout.on('data', output.stdout);
    worker.stderr.on('data', output.stderr);
    workers[index] = worker;
    ready[index] = false;
    for (const message of untaken[index]?.values() ?? []) worker.postMessage(message);
    worker.on('message', (message: unknown) => {
      if (!isFromWorker(message)) return;
      if (message.kind === 'ready') ready[index] = true;
      if (message.kind === 'taken') for (const id of message.ids) untaken[index]?.delete(id);
      if (message.kind.startsWith('console-') && 'id' in message && index === consoleWorker) {
        consoleRelay.received(message);
        return;
      }
      if (message.kind === 'pass-on') return passOn(message.work);
      if (message.kind === 'failed') {
        logger.error('worker failed to start', { index, error: message.error });
        // Ended, so that it is started again (below) with the work handed to it.
        void worker.terminate();
      }
      for (const listener of listeners) listener(index, message);
    });
    worker.on('error', (error) =>
      logger.error('worker stopped on an error', { index, error: describeError(error) }),
    );
    worker.on('exit', (code) => {
      if (workers[index] !== worker) return;
      ready[index] = false;
      if (index === consoleWorker) consoleRelay.lost();
      if (stopping) return;
      logger.error('worker exited; starting it again', { index, code });
      setTimeout(() => spawn(index), 1_000).unref();
    });
  };
  const answer = (index: number, kind: FromWorker['kind']) =>
    new Promise<void>((resolve, reject) => {
      const listener = (from: number, message: FromWorker) => {
        if (from !== index) return;
        if (message.kind === 'failed') {
          listeners.delete(listener);
          reject(new Error(message.error));
        } else if (message.kind === kind) {
          listeners.delete(listener);
          resolve();
        }
      };
      listeners.add(listener);
    });
  const post = (index: number, message: ToWorker) => workers[index]?.postMessage(message);
  const spread = (key: string) => (count === 1 ? 0 : fnv1a(key) % count);
  const route = (thread: ThreadRef) => spread(`${thread.teamId}:${thread.channelId}:${thread.threadTs}`);
  /** Posts what Slack already has an ack for, kept until the worker answers `taken`. */
  const handOver = (index: number, handover: (id: number) => ToWorker) => {
    handedOver += 1;
    const message = handover(handedOver);
    untaken[index]?.set(handedOver, message);
    post(index, message);
  };
  const runWork: RunWork = {
    message: (message, keys) => handOver(route(message), (id) => ({ kind: 'message', id, message, keys })),
    settled: (settlement, where = {}) =>
      post(route(settlement.approval), { kind: 'settled', settlement, where }),
    // To the worker that drives the thread's runs, so the model request in flight is abandoned at once.
    stopRun: (stop) => post(route(stop), { kind: 'stop-run', stop }),
  };
  /** Work the console's worker passes on, routed as this thread's own. */
  const passOn = (work: PassedOnWork): void => {
    if (work.kind === 'message') runWork.message(work.message, work.keys);
    else if (work.kind === 'settled') runWork.settled(work.settlement, work.where);
    else runWork.stopRun(work.stop);
  };
  for (const index of roles.keys()) spawn(index);
  return {
    ...runWork,
    // A click's approval is found where it is decided: spread by its button value.
    click: (click, key) => handOver(spread(click.value ?? ''), (id) => ({ kind: 'click', id, click, key })),
    async checkDeadlines() {
      const checked = answer(backgroundWorker, 'deadlines-checked');
      post(backgroundWorker, { kind: 'check-deadlines' });
      await checked;
    },
    async stop(graceMs) {
      stopping = true;
      await Promise.all(
        workers.map(async (worker, index) => {
          const stopped = answer(index, 'stopped');
          post(index, { kind: 'stop', graceMs });
          await Promise.race([
            stopped,
            once(worker, 'exit'),
            new Promise((r) => setTimeout(r, graceMs + 2_000)),
          ]);
          await worker.terminate();
        }),
      );
    },
    reloadPolicy(text) {
      policyText = text;
      for (const index of roles.keys()) post(index, { kind: 'policy', text });
    },
    running: () => ready.filter(Boolean).length,
    console: consoleRelay.handle,
    async memory() {
      const answers = await Promise.all(
        workers.map((_, index) =>
          !ready[index]
            ? undefined
            : new Promise<ThreadMemory | undefined>((resolve) => {
                const timer = setTimeout(() => done(undefined), 1_000);
                const listener = (from: number, message: FromWorker) => {
                  if (from === index && message.kind === 'memory') done(message.memory);
                };
                const done = (memory: ThreadMemory | undefined) => {
                  clearTimeout(timer);
                  listeners.delete(listener);
                  resolve(memory);
                };
                listeners.add(listener);
                post(index, { kind: 'memory' });
              }),
        ),
      );
      return answers.filter((memory): memory is ThreadMemory => memory !== undefined);
    },
  };
}

/** FNV-1a over a string's UTF-16 code units: a cheap, stable spread of keys over the workers. */
function fnv1a(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i += 1) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
