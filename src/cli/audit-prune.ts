import { parseArgs } from 'node:util';
import { describePruneReport, yieldToIntake } from '../audit/retention.js';
import { parseTimePoint } from '../audit/time-filter.js';
import { openDatabase } from '../db/open-database.js';
import { createRetentionStore } from '../db/retention-store.js';
import { randomId } from '../ids.js';
import { silentLogger } from '../logger.js';
import { ownerIsGone, processOwnerId } from '../process-identity.js';
import { argumentProblem } from './argument-problem.js';
import { databaseConfigOf } from './audit-database.js';
import type { CliIo } from './audit-io.js';

/** `prune --before …`: the one command that writes; it opens the database as the bot does (migrating it). */
export async function runPrune(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  io: CliIo,
  seeHelp: string,
): Promise<number> {
  let text: string | undefined;
  try {
    text = parseArgs({ args: argv.slice(1), options: { before: { type: 'string' } } }).values.before;
  } catch (error) {
    io.err(`${argumentProblem(error)}\n${seeHelp}`);
    return 2;
  }
  const now = io.now();
  const before = text === undefined ? undefined : parseTimePoint(text, now);
  if (text === undefined || before === undefined || before > now) {
    io.err(`prune needs --before with a span such as 90d or a past date such as 2026-03-01\n${seeHelp}`);
    return 2;
  }
  const config = databaseConfigOf(env, io);
  if (!config) return 2;
  const db = await openDatabase(config.database, silentLogger);
  try {
    const owner = processOwnerId();
    const retention = createRetentionStore({
      db,
      clock: { now: () => io.now() },
      newId: randomId,
      owner,
      leaseMs: 30_000,
      ownerIsGone: (other) => ownerIsGone(other, owner),
    });
    io.out(
      describePruneReport(
        await retention.prune(before, { at: now, limit: `--before ${text}` }, yieldToIntake),
      ),
    );
    return 0;
  } finally {
    await db.close();
  }
}
