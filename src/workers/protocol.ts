import type { ApprovalClick } from '../approvals/click-inbox.js';
import type { Config } from '../config.js';
import type { Settlement } from '../conversations/decision-follow-up.js';
import type { RunWork } from '../conversations/run-work.js';
import type { CardLocation, IncomingMessage, StopRequest } from '../conversations/surface-ports.js';
import type { WorkerRole } from './worker-roles.js';

/** What a worker thread is started with (cloned into it: plain data only). */
export interface WorkerData {
  config: Config;
  /** The lease owner of the whole process: a run claimed in one thread is driven in another under that claim. */
  owner: string;
  /** What this worker does (see worker-roles.ts). */
  role: WorkerRole;
  /** The approval policy file's text in force (validated by the intake thread); absent: the worker reads the file. */
  policyText?: string;
}

/** From the intake thread to a worker. */
export type ToWorker =
  /** `id`: the worker answers `taken` with it once the message is stored (or the thread was told it was not). */
  | { kind: 'message'; id: number; message: IncomingMessage; keys: readonly string[] }
  /**
   * `id`: the worker answers `taken` with it once the decision is recorded (or the click refused); `key`: the
   * click's row in the request ledger, marked decided then.
   */
  | { kind: 'click'; id: number; click: ApprovalClick; key: string }
  | { kind: 'settled'; settlement: Settlement; where: { fallback?: CardLocation } }
  | { kind: 'stop-run'; stop: StopRequest }
  | { kind: 'check-deadlines' }
  | { kind: 'memory' }
  /** The approval policy file was reloaded: its text, already validated by the intake thread. */
  | { kind: 'policy'; text: string }
  | { kind: 'stop'; graceMs: number }
  | ConsoleToWorker;

/**
 * A web console request relayed by the intake thread to the worker that serves the console (see
 * console-relay.ts): the request, then one `console-pull` per chunk of the answer written out (the worker keeps a
 * few chunks in flight, no more), or `console-cancel` when the client went away.
 */
export type ConsoleToWorker =
  | { kind: 'console-request'; id: number; request: RelayedRequest }
  | { kind: 'console-pull'; id: number }
  | { kind: 'console-cancel'; id: number };

/** An HTTP request as the intake thread read it, its body whole (bounded by the console's limit). */
export interface RelayedRequest {
  method: string;
  /** Absolute: `http://host/console/...`. */
  url: string;
  /** Name and value pairs, in the order received. */
  headers: [string, string][];
  remoteAddress: string | undefined;
  body: Uint8Array | undefined;
}

/**
 * The worker's answer to a relayed request: its head, the body in chunks, then its end; `console-failed` when no
 * answer (or no rest of it) can be given.
 */
export type ConsoleFromWorker =
  | { kind: 'console-head'; id: number; status: number; headers: Record<string, string | string[]> }
  | { kind: 'console-chunk'; id: number; bytes: Uint8Array }
  | { kind: 'console-end'; id: number }
  | { kind: 'console-failed'; id: number };

/**
 * Work for the run workers that a worker not driving runs (the console's) passes on through the intake thread,
 * which routes it as its own: what follows a decision made on the web, a stop asked for there.
 */
export type PassedOnWork =
  | { kind: 'message'; message: IncomingMessage; keys: readonly string[] }
  | { kind: 'settled'; settlement: Settlement; where: { fallback?: CardLocation } }
  | { kind: 'stop-run'; stop: StopRequest };

/** The work of a worker that drives no runs: each piece passed on to the intake thread (see `PassedOnWork`). */
export function passingOn(send: (work: PassedOnWork) => void): RunWork {
  return {
    message: (message, keys) => send({ kind: 'message', message, keys }),
    settled: (settlement, where = {}) => send({ kind: 'settled', settlement, where }),
    stopRun: (stop) => send({ kind: 'stop-run', stop }),
  };
}

/** From a worker to the intake thread. */
export type FromWorker =
  | { kind: 'ready' }
  | { kind: 'pass-on'; work: PassedOnWork }
  | { kind: 'deadlines-checked' }
  | { kind: 'stopped' }
  | { kind: 'memory'; memory: ThreadMemory }
  /** Messages and clicks stored or decided, sent together at most every 20 ms (see worker-thread.ts). */
  | { kind: 'taken'; ids: number[] }
  | { kind: 'failed'; error: string }
  | ConsoleFromWorker;

/** One thread's JavaScript memory, in MiB (the process's resident set is shared by all threads). */
export interface ThreadMemory {
  heapUsed: number;
  heapTotal: number;
  /** Memory of JavaScript objects kept outside the heap (buffers). */
  external: number;
}

const MIB = 1024 * 1024;

/** This thread's memory, for /healthz. */
export function threadMemory(): ThreadMemory {
  const usage = process.memoryUsage();
  const mib = (bytes: number) => Math.round((bytes / MIB) * 10) / 10;
  return { heapUsed: mib(usage.heapUsed), heapTotal: mib(usage.heapTotal), external: mib(usage.external) };
}

/** Checks what a worker was started with (it is this program's own, but arrives as `unknown`). */
export function isWorkerData(value: unknown): value is WorkerData {
  return (
    value !== null &&
    typeof value === 'object' &&
    'config' in value &&
    typeof value.config === 'object' &&
    'owner' in value &&
    typeof value.owner === 'string' &&
    'role' in value &&
    (value.role === 'runs+background' || value.role === 'runs' || value.role === 'console')
  );
}

/** Recognises a message from a worker (it is this program's own, but arrives as `unknown`). */
export function isFromWorker(value: unknown): value is FromWorker {
  if (value === null || typeof value !== 'object' || !('kind' in value)) return false;
  return [
    'ready',
    'deadlines-checked',
    'stopped',
    'failed',
    'memory',
    'taken',
    'pass-on',
    'console-head',
    'console-chunk',
    'console-end',
    'console-failed',
  ].includes(String(value.kind));
}
