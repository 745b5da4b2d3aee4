import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { sleep } from './wait.js';

/** Repository root: this file lives in `<root>/test/support/`. */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * What `npm start` runs, read from package.json (`node [flags] scripts/start.mjs`): the compiled bot, built by the
 * tests' global setup, with the same Node flags.
 */
function npmStart(): string[] {
  const scripts: unknown = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).scripts;
  const start = scripts && typeof scripts === 'object' && 'start' in scripts ? String(scripts.start) : '';
  const [command, ...args] = start.split(/\s+/);
  if (command !== 'node' || args.length === 0) throw new Error(`npm start is not "node …": ${start}`);
  return args.map((arg) => (arg.startsWith('-') ? arg : join(REPO_ROOT, arg)));
}
// An absolute URL, so `--import` works whatever the child's working directory is.
export const TSX_LOADER = pathToFileURL(join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;

export type ProcessEnv = Record<string, string | undefined>;

export interface BotProcessOptions {
  /** Added to a minimal environment (PATH and HOME only). `PORT` defaults to a free port. */
  env: ProcessEnv;
  /** Working directory of the child; default a new empty folder (see `emptyWorkingDirectory`). */
  cwd?: string;
  /** A TypeScript file to run under tsx; default what `npm start` runs. */
  entry?: string;
  /** How long to wait for `GET /healthz` to answer 200; default 20 s. */
  readyTimeoutMs?: number;
  /** How often to ask `GET /healthz` while waiting; default 100 ms. */
  readyPollMs?: number;
  /**
   * The reader of the child's output closes both pipes after this many lines, as `npm start 2>&1 | head -N`
   * does; later writes of the child fail (EPIPE). Default: read everything.
   */
  closeOutputAfterLines?: number;
}

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface BotProcess {
  port: number;
  /** `http://127.0.0.1:PORT`. */
  url: string;
  pid: number;
  /** stdout and stderr so far, interleaved in arrival order. */
  output(): string;
  /** Sends `signal` (default SIGKILL: a crash, no clean shutdown) and resolves with the exit code once exited. */
  kill(signal?: NodeJS.Signals): Promise<number | null>;
  exited: Promise<ProcessExit>;
}

const live = new Set<ChildProcess>();
// A failed test must not leave a bot running: kill whatever is left when the test worker exits.
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/** Asks the OS for a free TCP port on 127.0.0.1 (listen on 0, read it, close). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => done());
  });
  const address = server.address();
  await new Promise<void>((done) => server.close(() => done()));
  if (address === null || typeof address === 'string') throw new Error('freePort: no TCP address');
  return address.port;
}

export function childEnv(env: ProcessEnv): Record<string, string> {
  const result: Record<string, string> = {};
  // Minimal on purpose: no NODE_OPTIONS or VITEST_* from the test runner leak into the bot.
  for (const [key, value] of Object.entries({ PATH: process.env.PATH, HOME: process.env.HOME, ...env })) {
    if (value !== undefined) result[key] = value;
  }
  return result;
}

/**
 * A new empty folder for a child's working directory, removed with `remove()`. The programs read `.env` from
 * their working directory, so a child started in the repo root would read a developer's `.env` (the Quick
 * Start creates one there) and a test could pass or fail by what it holds. Children see only their `env`.
 */
export function emptyWorkingDirectory(): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), 'bot-cwd-'));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

interface Spawned {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  output(): string;
  exited: Promise<ProcessExit>;
}

/** Spawns `node --import tsx <entry>` and collects its output. */
function spawnBot(
  env: ProcessEnv,
  cwd: string | undefined,
  entry: string | undefined,
  closeOutputAfterLines?: number,
): Spawned {
  // A test's own entry (TypeScript) runs under tsx; by default, what `npm start` runs.
  const args = entry ? ['--import', TSX_LOADER, entry] : npmStart();
  const folder = cwd === undefined ? emptyWorkingDirectory() : undefined;
  const child = spawn(process.execPath, args, {
    cwd: cwd ?? folder?.path,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  child.once('close', () => folder?.remove());
  let stdout = '';
  let stderr = '';
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (text: string) => {
    stdout += text;
    output += text;
  });
  child.stderr?.setEncoding('utf8').on('data', (text: string) => {
    stderr += text;
    output += text;
  });
  if (closeOutputAfterLines !== undefined) {
    const closeWhenEnough = () => {
      if (output.split('\n').length - 1 < closeOutputAfterLines) return;
      child.stdout?.destroy();
      child.stderr?.destroy();
    };
    child.stdout?.on('data', closeWhenEnough);
    child.stderr?.on('data', closeWhenEnough);
  }
  const exited = new Promise<ProcessExit>((done) => {
    child.once('error', (error) => {
      output += `\n[spawn error] ${error.message}\n`;
      live.delete(child);
      done({ code: null, signal: null });
    });
    // 'close' (not 'exit') fires after the output pipes are drained, so output() is complete.
    child.once('close', (code, signal) => {
      live.delete(child);
      done({ code, signal });
    });
  });
  return { child, stdout: () => stdout, stderr: () => stderr, output: () => output, exited };
}

async function healthy(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) });
    await res.body?.cancel();
    return res.status === 200;
  } catch {
    return false;
  }
}

/**
 * True when process `pid` holds a listening TCP socket on `port` (read from /proc; true where /proc is absent).
 * A port from `freePort()` is free only until someone binds it: between that and the child's own bind, another
 * test's server may take it, and its `/healthz` would then answer for a child that never listened.
 */
export function listensOn(pid: number, port: number): boolean {
  const inodes = new Set<string>();
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  try {
    for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
      for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
        const fields = line.trim().split(/\s+/);
        // local_address is HEX_IP:HEX_PORT; state 0A is LISTEN; the inode is the tenth field.
        if (fields[1]?.endsWith(`:${hexPort}`) && fields[3] === '0A' && fields[9]) inodes.add(fields[9]);
      }
    }
  } catch {
    return true;
  }
  if (inodes.size === 0) return false;
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
        return target.startsWith('socket:[') && inodes.has(target.slice(8, -1));
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

/**
 * Starts the real entry point as a child process and waits until it listens and `GET /healthz` answers 200.
 * Fails with the child's stdout and stderr in the message if it exits or is not ready in time. When the test
 * named no `PORT` and the free port it was given was taken before the child bound it, starts again on another.
 *
 * @example
 * const bot = await startBotProcess({ env: { SLACK_API_URL: slack.url, DB_FILE: file } });
 * await bot.kill(); // SIGKILL, like a crash
 */
/** True once the process at `url` no longer accepts connections (it is stopping): `/healthz` is not answered. */
export async function refusesConnections(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) });
    await response.body?.cancel();
    return false;
  } catch {
    return true;
  }
}

export async function startBotProcess(options: BotProcessOptions): Promise<BotProcess> {
  for (let attempt = 1; ; attempt++) {
    const started = await startOnce(options);
    if (started.ok) return started.bot;
    const portTaken = options.env.PORT === undefined && started.output.includes('EADDRINUSE');
    if (!portTaken || attempt === 3) throw new Error(started.message);
  }
}

type StartAttempt = { ok: true; bot: BotProcess } | { ok: false; message: string; output: string };

async function startOnce(options: BotProcessOptions): Promise<StartAttempt> {
  const port = options.env.PORT === undefined ? await freePort() : Number(options.env.PORT);
  const spawned = spawnBot(
    { ...options.env, PORT: String(port) },
    options.cwd,
    options.entry,
    options.closeOutputAfterLines,
  );
  const url = `http://127.0.0.1:${port}`;
  let exit: ProcessExit | undefined;
  void spawned.exited.then((e) => {
    exit = e;
  });
  const pid = spawned.child.pid ?? -1;
  const deadline = Date.now() + (options.readyTimeoutMs ?? 20_000);
  while (!(listensOn(pid, port) && (await healthy(url)))) {
    if (exit !== undefined || Date.now() >= deadline) {
      const reason = exit ? `exited (code ${exit.code}, signal ${exit.signal})` : 'was not healthy in time';
      spawned.child.kill('SIGKILL');
      await spawned.exited;
      const output = spawned.output();
      return { ok: false, message: `bot process ${reason} on port ${port}; output:\n${output}`, output };
    }
    await sleep(options.readyPollMs ?? 100);
  }
  return {
    ok: true,
    bot: {
      port,
      url,
      pid,
      output: spawned.output,
      kill: async (signal: NodeJS.Signals = 'SIGKILL') => {
        if (exit === undefined) spawned.child.kill(signal);
        return (await spawned.exited).code;
      },
      exited: spawned.exited,
    },
  };
}

export interface RunToExitOptions {
  env: ProcessEnv;
  cwd?: string;
  /** A TypeScript file to run under tsx; default what `npm start` runs. */
  entry?: string;
  /** Default 20 s; on timeout the child is killed and the promise rejects with its output. */
  timeoutMs?: number;
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the entry point until it exits by itself: for start-up failures such as a missing setting. */
export async function runBotProcessToExit(options: RunToExitOptions): Promise<RunResult> {
  const env = { PORT: String(await freePort()), ...options.env };
  const spawned = spawnBot(env, options.cwd, options.entry);
  const timeoutMs = options.timeoutMs ?? 20_000;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((done) => {
    timer = setTimeout(() => done('timeout'), timeoutMs);
  });
  const result = await Promise.race([spawned.exited, timedOut]);
  clearTimeout(timer);
  if (result === 'timeout') {
    spawned.child.kill('SIGKILL');
    await spawned.exited;
    throw new Error(`bot process did not exit within ${timeoutMs} ms; output:\n${spawned.output()}`);
  }
  return { code: result.code, stdout: spawned.stdout(), stderr: spawned.stderr() };
}
