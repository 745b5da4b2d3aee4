import { spawn } from 'node:child_process';
import { join } from 'node:path';
import {
  childEnv,
  emptyWorkingDirectory,
  type ProcessEnv,
  type ProcessExit,
  REPO_ROOT,
} from './bot-process.js';
import { waitUntil } from './wait.js';

// Compiled by the tests' global setup (`npm run build`), so no TypeScript compiler runs in the child.
const CHAT_ENTRY = join(REPO_ROOT, 'dist', 'chat.js');

export interface ChatProcess {
  /** Everything printed on stdout so far. */
  stdout(): string;
  stderr(): string;
  /** Types one line. */
  send(line: string): void;
  /** Closes standard input: Ctrl-D. */
  end(): void;
  /** SIGKILL, like a crash or a closed terminal; resolves once it has exited. */
  kill(): Promise<ProcessExit>;
  /**
   * Resolves once `text` has been printed `times` times (default once more than when the last wait for it
   * returned), with stdout so far.
   */
  waitFor(text: string, times?: number): Promise<string>;
  exited: Promise<ProcessExit>;
}

function count(haystack: string, needle: string): number {
  return haystack.split(needle).length - 1;
}

/**
 * Runs `npm run chat`'s entry point, compiled (`node dist/chat.js ARGS`), with piped standard input, so
 * a test types into it like a person at a terminal. The working directory is a new empty folder unless `cwd`
 * is given, so a developer's `.env` is never read.
 *
 * @example
 * const chat = startChatProcess(['--thread', 't1', '--user', 'alice'], { OPENAI_BASE_URL: model.baseURL });
 * await chat.waitFor('you> ');
 * chat.send('add a note saying hi');
 */
export function startChatProcess(args: string[], env: ProcessEnv, cwd?: string): ChatProcess {
  const folder = cwd === undefined ? emptyWorkingDirectory() : undefined;
  const child = spawn(process.execPath, [CHAT_ENTRY, ...args], {
    cwd: cwd ?? folder?.path,
    env: childEnv(env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.once('close', () => folder?.remove());
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => {
    stdout += text;
  });
  child.stderr.setEncoding('utf8').on('data', (text: string) => {
    stderr += text;
  });
  let exit: ProcessExit | undefined;
  const exited = new Promise<ProcessExit>((done) => {
    child.once('close', (code, signal) => {
      exit = { code, signal };
      done(exit);
    });
  });
  process.once('exit', () => child.kill('SIGKILL'));
  const seen = new Map<string, number>();
  return {
    stdout: () => stdout,
    stderr: () => stderr,
    send: (line) => {
      child.stdin.write(`${line}\n`);
    },
    end: () => child.stdin.end(),
    kill: () => {
      if (exit === undefined) child.kill('SIGKILL');
      return exited;
    },
    async waitFor(text, times) {
      const target = times ?? (seen.get(text) ?? 0) + 1;
      await waitUntil(() => count(stdout, text) >= target || exit !== undefined, {
        timeoutMs: 15_000,
        message: `chat never printed ${JSON.stringify(text)}; stdout:\n${stdout}\nstderr:\n${stderr}`,
      });
      if (count(stdout, text) < target)
        throw new Error(
          `chat exited before printing ${JSON.stringify(text)}; stdout:\n${stdout}\nstderr:\n${stderr}`,
        );
      seen.set(text, target);
      return stdout;
    },
    exited,
  };
}
