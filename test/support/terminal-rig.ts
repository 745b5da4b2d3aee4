import { loadApprovalPolicy } from '../../src/approvals/policy-file.js';
import { runChatSession } from '../../src/cli/chat-session.js';
import type { LineReader } from '../../src/cli/line-reader.js';
import { terminalThread } from '../../src/cli/terminal-thread.js';
import { createChatServices } from '../../src/compose/terminal.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { toolNames } from '../../src/tools/built-in-tools.js';
import { waitUntil } from './wait.js';

export interface TerminalSession {
  /** Everything printed so far, prompts included. */
  output(): string;
  /** Warnings and errors logged (what `npm run chat` prints on stderr). */
  logs: string[];
  /** Types one line. */
  send(line: string): void;
  /** Ctrl-D: the input ends. */
  end(): void;
  /** Resolves once `text` was printed `times` times (default: once more than the last wait for it saw). */
  waitFor(text: string, times?: number): Promise<string>;
  /** Resolves when the session is over and its database closed. */
  done: Promise<void>;
}

function count(haystack: string, needle: string): number {
  return haystack.split(needle).length - 1;
}

/**
 * `npm run chat`'s session in this process (src/chat.ts without the process around it): the same
 * services and session on a real database and a fake model, typed into through a scripted line reader. For
 * terminal behaviour that a real terminal adds nothing to; test/e2e/terminal-chat.test.ts runs the command.
 *
 * @example
 * const t = await startTerminalSession({ thread: 'notes', user: 'alice', env: { OPENAI_BASE_URL: model.baseURL, DATABASE_PATH } });
 * await t.waitFor('you> ');
 * t.send('add a note');
 */
export async function startTerminalSession(options: {
  thread: string;
  user: string;
  env: Record<string, string>;
}): Promise<TerminalSession> {
  const loaded = loadConfig({ OPENAI_MODEL: 'fake-model', ...options.env }, 'chat');
  if (!loaded.ok) throw new Error(loaded.problems.join('\n'));
  const policy = loadApprovalPolicy(loaded.config.approvalPolicyFile, toolNames());
  if (!policy.ok) throw new Error(policy.problems.join('\n'));
  let output = '';
  const write = (text: string) => {
    output += text;
  };
  const logs: string[] = [];
  const queued: string[] = [];
  let waiting: ((line: string | undefined) => void) | undefined;
  let ended = false;
  const reader: LineReader = {
    next(prompt) {
      write(prompt);
      const line = queued.shift();
      if (line !== undefined) return Promise.resolve(line);
      if (ended) return Promise.resolve(undefined);
      return new Promise((resolve) => {
        waiting = resolve;
      });
    },
    close() {},
  };
  const services = await createChatServices(
    loaded.config,
    createLogger('warn', (line) => logs.push(line)),
    policy.policy,
    write,
  );
  const thread = terminalThread(options.thread);
  const done = runChatSession({
    ...services,
    conversationId: () => services.findConversation(thread),
    thread,
    threadName: options.thread,
    userId: options.user,
    reader,
    write,
  }).finally(() => services.close());
  const seen = new Map<string, number>();
  return {
    output: () => output,
    logs,
    send(line) {
      const resolve = waiting;
      waiting = undefined;
      if (resolve) resolve(line);
      else queued.push(line);
    },
    end() {
      ended = true;
      const resolve = waiting;
      waiting = undefined;
      resolve?.(undefined);
    },
    async waitFor(text, times) {
      const target = times ?? (seen.get(text) ?? 0) + 1;
      await waitUntil(() => count(output, text) >= target, {
        timeoutMs: 10_000,
        message: `the session never printed ${JSON.stringify(text)}; output:\n${output}`,
      });
      seen.set(text, target);
      return output;
    },
    done,
  };
}
