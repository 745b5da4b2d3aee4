import { describeError } from '../errors.js';

/** What a command line that `parseArgs` refused says, without the error's class and code. */
export function argumentProblem(error: unknown): string {
  return describeError(error).replace(/^TypeError( \[\w+\])?: /, '');
}
