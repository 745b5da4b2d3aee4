import { describeError } from '../errors.js';

/**
 * For commands whose output is often piped (`npm run audit -- list | head -1`): when the reader closes the
 * pipe, what it wanted is printed, so the command stops at once with exit code 0 and no stack trace. Any
 * other failure to write is reported on stderr with exit code 2.
 */
export function stopQuietlyWhenReaderCloses(stream: NodeJS.WriteStream = process.stdout): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    process.stderr.write(`Cannot write the output: ${error.message}\n`);
    process.exit(2);
  });
}

/** Where a command writes: a line to stdout, a line to stderr. */
export interface CommandLines {
  out(line: string): void;
  err(line: string): void;
}

/**
 * Runs a command line program of `npm run <name>`: its lines go to stdout and stderr (a reader closing the pipe
 * stops it quietly), its result is the exit code, and a failure it did not expect is one sentence on stderr
 * with exit code 2.
 */
export function runCommand(what: string, run: (lines: CommandLines) => Promise<number>): void {
  stopQuietlyWhenReaderCloses();
  run({
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
  }).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`The ${what} command failed: ${describeError(error)}\n`);
      process.exitCode = 2;
    },
  );
}
