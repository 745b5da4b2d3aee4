import { readPolicySource } from '../approvals/policy-source.js';

export interface PolicyCliIo {
  out(line: string): void;
  err(line: string): void;
}

export const POLICY_USAGE = `Usage: npm run policy -- <command> [options]

Commands:
  check FILE     validate an approval policy file: print its summary (the line the bot prints at start-up)
                 and exit 0, or print every problem and exit 1`;

/** `npm run policy -- check FILE`; exit codes: 0 valid, 1 problems in the file, 2 bad usage. */
export async function runPolicyCli(argv: readonly string[], io: PolicyCliIo): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'check':
      return check(rest, io);
    case undefined:
    case 'help':
    case '--help':
      io.out(POLICY_USAGE);
      return command === undefined ? 2 : 0;
    default:
      io.err(`Unknown command "${command}".`);
      io.err(POLICY_USAGE);
      return 2;
  }
}

function check(args: readonly string[], io: PolicyCliIo): number {
  const [file, ...extra] = args;
  if (file === undefined || extra.length > 0) {
    io.err('check takes one argument: the policy file (npm run policy -- check ./policy.json)');
    return 2;
  }
  const source = readPolicySource(file);
  if (!source.ok) {
    io.err(`Approval policy error: ${file} has ${source.problems.length} problem(s).`);
    for (const problem of source.problems) io.err(`  - ${problem}`);
    return 1;
  }
  io.out(source.policy.summary);
  return 0;
}
