import { isMainThread } from 'node:worker_threads';

type StreamName = 'stdout' | 'stderr';

/** Writes to the process's stdout and stderr that never throw and never loop when a stream is gone. */
export interface ProcessOutput {
  stdout(text: string | Uint8Array): void;
  stderr(text: string | Uint8Array): void;
}

let guarded: ProcessOutput | undefined;

/**
 * The process's output, guarded against a reader that went away (`npm start 2>&1 | head -4`). Node emits a
 * failed write (EPIPE) as an `error` event on the stream; with no listener that is an uncaught exception, which
 * the bot logs, to the same closed stream, failing again: a loop that spins a core for ever. Here each stream
 * gets a listener once; after its first failure the stream is written no more (its lines are dropped), and
 * the other stream, while it still works, says so once. The bot goes on serving. Worker threads write through
 * their own forwarding streams, which the intake thread drains into this (see worker-pool.ts).
 */
export function processOutput(): ProcessOutput {
  if (guarded) return guarded;
  const broken: Record<StreamName, boolean> = { stdout: false, stderr: false };
  const streams: Record<StreamName, NodeJS.WriteStream> = { stdout: process.stdout, stderr: process.stderr };
  const write = (name: StreamName, text: string | Uint8Array) => {
    const stream = streams[name];
    if (broken[name] || stream.destroyed) return;
    stream.write(text);
  };
  const failed = (name: StreamName, error: NodeJS.ErrnoException) => {
    if (broken[name]) return;
    broken[name] = true;
    const other: StreamName = name === 'stdout' ? 'stderr' : 'stdout';
    const entry = {
      time: new Date().toISOString(),
      level: 'warn',
      msg: `${name} cannot be written (${error.code ?? error.message}): its output is dropped from now on; the bot goes on serving`,
    };
    write(other, `${JSON.stringify(entry)}\n`);
  };
  // Only the main thread's streams are the process's own; a worker's are drained by the main thread.
  if (isMainThread) {
    process.stdout.on('error', (error: NodeJS.ErrnoException) => failed('stdout', error));
    process.stderr.on('error', (error: NodeJS.ErrnoException) => failed('stderr', error));
  }
  guarded = { stdout: (text) => write('stdout', text), stderr: (text) => write('stderr', text) };
  return guarded;
}
