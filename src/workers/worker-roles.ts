/**
 * What each worker thread of the process does, said here once (the pool starts and routes by it, each worker
 * wires itself by it):
 * - `runs`: takes messages and clicks and drives their runs (routed by thread, see worker-pool.ts);
 * - `background`: also checks deadlines and takes over stopped runs (one run worker, the first);
 * - `console`: serves the web console and nothing else, so that a busy console slows no run; a decision made
 *   on the web is followed up (card, resumed run) by the run worker of its thread.
 */
export type WorkerRole = 'runs+background' | 'runs' | 'console';

/** The roles of the process's workers, by index: `runWorkers` run workers, then the console's own. */
export function workerRoles(runWorkers: number): WorkerRole[] {
  const runs = Array.from(
    { length: runWorkers },
    (_, i): WorkerRole => (i === 0 ? 'runs+background' : 'runs'),
  );
  return runWorkers > 0 ? [...runs, 'console'] : [];
}

export const takesRuns = (role: WorkerRole): boolean => role !== 'console';
export const doesBackground = (role: WorkerRole): boolean => role === 'runs+background';
export const servesConsole = (role: WorkerRole): boolean => role === 'console';
