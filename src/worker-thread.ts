import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { composeWorker } from './compose/worker.js';
import { describeError } from './errors.js';
import { createLogger } from './logger.js';
import { consoleServer } from './workers/console-serve.js';
import {
  type FromWorker,
  isWorkerData,
  type ToWorker,
  threadMemory,
  type WorkerData,
} from './workers/protocol.js';

/**
 * Lowers this thread's scheduling priority (on Linux the nice value belongs to each thread), so when the cores
 * are busy the thread answering Slack, which has 3 seconds to do it, runs first; runs wait a moment instead.
 * Where the system does not allow it, nothing changes.
 */
function yieldToIntake(): void {
  try {
    setPriority(0, WORKER_NICENESS);
  } catch {
    // Not permitted or not supported: the worker runs at the process's priority.
  }
}

/** The nice value of a worker thread: below the intake's (0), well above the lowest (19). */
const WORKER_NICENESS = 5;

/** How long a worker collects the ids of what it took before telling the intake thread. */
const TAKEN_BATCH_MS = 20;

/**
 * Tells the intake thread what was stored or decided, in one message per 20 ms at most: each message wakes the
 * thread that answers Slack, and under a burst of clicks one per click cost it about as much as a click's ack.
 * A worker that dies within those 20 ms has its last few handed over again, which a message's dedupe keys and
 * a click's compare-and-set make harmless.
 */
function takenInBatches(send: (message: FromWorker) => void): (id: number) => void {
  let ids: number[] = [];
  return (id) => {
    ids.push(id);
    if (ids.length > 1) return;
    setTimeout(() => {
      send({ kind: 'taken', ids });
      ids = [];
    }, TAKEN_BATCH_MS);
  };
}

/**
 * A worker thread, doing what its role says (see workers/worker-roles.ts): driving runs, or serving the web
 * console. Its services are wired in compose/worker.ts (the core on a connection of its own, the Slack clients,
 * the follow-up of decisions, and, for one worker of the process, the background work). The intake thread
 * hands it what to do, or relays the console's requests to it; it never answers Slack requests itself.
 */
async function main(port: NonNullable<typeof parentPort>, data: WorkerData): Promise<void> {
  const send = (message: FromWorker) => port.postMessage(message);
  const taken = takenInBatches(send);
  yieldToIntake();
  const logger = createLogger(data.config.logLevel);
  const services = await composeWorker(data, logger, (work) => send({ kind: 'pass-on', work }));
  const { conversations, followUp } = services.core;
  const serveConsole = services.console
    ? consoleServer(services.console, (message, transfer) => port.postMessage(message, transfer))
    : undefined;
  const failed = (what: string) => (error: unknown) =>
    logger.error(`${what} failed`, { error: describeError(error) });
  port.on('message', (message: ToWorker) => {
    switch (message.kind) {
      case 'message':
        conversations
          .handleMessage(message.message, message.keys, () => taken(message.id))
          .catch(failed('message'));
        return;
      case 'click':
        services.decideClick(message.click, message.key, () => taken(message.id)).catch(failed('click'));
        return;
      case 'settled':
        followUp.after(message.settlement, message.where).catch(failed('decision follow-up'));
        return;
      case 'stop-run':
        conversations.requestStop(message.stop).catch(failed('stop'));
        return;
      case 'check-deadlines':
        void services.checkDeadlines().then(() => send({ kind: 'deadlines-checked' }));
        return;
      case 'memory':
        send({ kind: 'memory', memory: threadMemory() });
        return;
      case 'policy':
        services.reloadPolicy(message.text);
        return;
      case 'console-request':
      case 'console-pull':
      case 'console-cancel':
        serveConsole?.(message);
        return;
      case 'stop':
        void services.stop(message.graceMs).then(() => send({ kind: 'stopped' }));
        return;
    }
  });
  send({ kind: 'ready' });
}

const data: unknown = workerData;
if (parentPort && isWorkerData(data)) {
  const port = parentPort;
  main(port, data).catch((error: unknown) => {
    port.postMessage({ kind: 'failed', error: describeError(error) } satisfies FromWorker);
  });
}
