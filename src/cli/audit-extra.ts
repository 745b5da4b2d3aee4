import { runBreakGlass } from './audit-break-glass.js';
import { runPrune } from './audit-prune.js';
import { type FollowIo, runTail } from './audit-tail.js';
import { runUsage } from './audit-usage.js';
import { runVerifyWithKey } from './audit-verify.js';

export const EXTRA_USAGE = `  prune --before 90d|2026-03-01
                         remove conversation content older than that (history, arguments, results, reasons;
                         audit payloads keep digests, so verify still passes); writes to the database
  verify --public-key FILE
                         also check every signed checkpoint (AUDIT_SIGNING_KEY's public key, PEM): a log cut
                         off or re-chained after a checkpoint is reported with that checkpoint (exit 1)
  usage [--since 30d] [--until …] [--team T…] [--by user|tool|team] [--format table|jsonl]
                         the model's tokens over the runs that ended in the window (default: 30 days, by user)
  tail [--lines N] [--after SEQ] [--follow]
                         the newest events as JSON lines (default 10; --after: every event after SEQ);
                         --follow keeps printing new events as they are written (for Vector, Fluent Bit)
  break-glass [--team T…] [--format table|jsonl]
                         break-glass approvals no other admin has acknowledged yet (exit 1 when any)`;

/** The commands this module answers; the others are audit-cli.ts's. */
export function isExtraCommand(argv: readonly string[]): boolean {
  return (
    argv[0] === 'tail' ||
    argv[0] === 'usage' ||
    argv[0] === 'prune' ||
    argv[0] === 'break-glass' ||
    (argv[0] === 'verify' && argv.some((arg) => arg === '--public-key' || arg.startsWith('--public-key=')))
  );
}

/** Runs `tail`, `usage`, `prune` or `verify --public-key`; returns the exit code (0 done, 1 chain or checkpoint broken, 2 usage or configuration problem). */
export async function runExtraCommand(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  io: FollowIo,
  seeHelp: string,
): Promise<number> {
  if (argv[0] === 'verify') return runVerifyWithKey(argv, env, io, seeHelp);
  if (argv[0] === 'prune') return runPrune(argv, env, io, seeHelp);
  if (argv[0] === 'usage') return runUsage(argv, env, io, seeHelp);
  if (argv[0] === 'break-glass') return runBreakGlass(argv, env, io, seeHelp);
  return runTail(argv, env, io, seeHelp);
}
