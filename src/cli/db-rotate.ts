import { createInstallationRecords } from '../db/installation-records-store.js';
import { openDatabase } from '../db/open-database.js';
import { randomId } from '../ids.js';
import { silentLogger } from '../logger.js';
import { processOwnerId } from '../process-identity.js';
import { rotateTokenKey } from '../slack/installations/rotate-token-key.js';
import { createTokenCipher } from '../slack/installations/token-cipher.js';
import { databaseConfigOf } from './audit-database.js';

/**
 * `rotate-token-key`: every stored Slack token sealed with TOKEN_ENCRYPTION_KEY_PREVIOUS is sealed again with
 * TOKEN_ENCRYPTION_KEY. Exit 0 when every installation is on the current key, 1 when some cannot be read.
 */
export async function rotateTokenKeyCommand(
  env: NodeJS.ProcessEnv,
  io: { out(line: string): void; err(line: string): void },
): Promise<number> {
  const config = databaseConfigOf(env, io);
  if (!config) return 2;
  const oauth = config.slack.oauth;
  if (!oauth) {
    io.err(
      'rotate-token-key: no tokens are stored here (installs into several workspaces need SLACK_CLIENT_ID, SLACK_CLIENT_SECRET, SLACK_STATE_SECRET and TOKEN_ENCRYPTION_KEY, without SLACK_BOT_TOKEN; see docs/installing.md).',
    );
    return 2;
  }
  const db = await openDatabase(config.database, silentLogger);
  try {
    const clock = { now: () => Date.now() };
    const records = createInstallationRecords({
      db,
      clock,
      newId: randomId,
      owner: processOwnerId(),
      leaseMs: 30_000,
      ownerIsGone: () => false,
    });
    const cipher = createTokenCipher(oauth.tokenKeys);
    const report = await rotateTokenKey(records, cipher, clock);
    io.out(
      `Sealed again with the current key (${cipher.currentKeyId}): ${report.rewritten}; already on it: ${report.current}.`,
    );
    for (const { id, reason } of report.unreadable)
      io.err(`${id} cannot be read (${reason}): neither key opens it; install the app there again.`);
    if (report.unreadable.length > 0) return 1;
    io.out('Every stored token is on the current key: TOKEN_ENCRYPTION_KEY_PREVIOUS can be unset.');
    return 0;
  } finally {
    await db.close();
  }
}
