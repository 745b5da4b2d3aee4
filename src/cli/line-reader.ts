import { createInterface } from 'node:readline';

export interface LineReader {
  /** Shows `prompt` and resolves with the next line, or undefined once the input has ended (Ctrl-D). */
  next(prompt: string): Promise<string | undefined>;
  close(): void;
}

/** Reads lines from a terminal or a pipe alike; lines that arrive before they are asked for are kept. */
export function createLineReader(input: NodeJS.ReadStream, output: NodeJS.WriteStream): LineReader {
  const rl = createInterface({ input, output, terminal: input.isTTY === true });
  const lines: string[] = [];
  let waiting: ((line: string | undefined) => void) | undefined;
  let ended = false;
  rl.on('line', (line) => {
    if (waiting) {
      const resolve = waiting;
      waiting = undefined;
      resolve(line);
    } else lines.push(line);
  });
  rl.on('close', () => {
    ended = true;
    waiting?.(undefined);
    waiting = undefined;
  });
  // Ctrl-C at a prompt ends the session like Ctrl-D; pending approvals stay pending.
  rl.on('SIGINT', () => rl.close());
  return {
    next(prompt) {
      const queued = lines.shift();
      if (queued !== undefined) {
        output.write(`${prompt}\n`);
        return Promise.resolve(queued);
      }
      if (ended) return Promise.resolve(undefined);
      rl.setPrompt(prompt);
      rl.prompt();
      return new Promise((resolve) => {
        waiting = resolve;
      });
    },
    close: () => rl.close(),
  };
}
