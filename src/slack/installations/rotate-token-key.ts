import type { Clock } from '../../clock.js';
import type { InstallationRecords } from './installation-records.js';
import type { TokenCipher } from './token-cipher.js';

export interface RotationReport {
  /** Installations sealed again with the current key. */
  rewritten: number;
  /** Installations that were sealed with it already. */
  current: number;
  /** Installations neither key opens, or changed since sealed: left as they are. */
  unreadable: { id: string; reason: string }[];
}

/**
 * Seals every stored installation sealed with the previous key again with the current one (`npm run db --
 * rotate-token-key`): once it reports nothing left, TOKEN_ENCRYPTION_KEY_PREVIOUS can be unset. Each rewrite is
 * a compare-and-set on the sealed value, so a reinstall meanwhile is kept, not overwritten.
 */
export async function rotateTokenKey(
  records: InstallationRecords,
  cipher: TokenCipher,
  clock: Clock,
): Promise<RotationReport> {
  const report: RotationReport = { rewritten: 0, current: 0, unreadable: [] };
  for (const row of await records.all()) {
    const opened = cipher.open(row.sealed, row.id);
    if (!opened.ok) {
      report.unreadable.push({ id: row.id, reason: opened.reason });
      continue;
    }
    if (!opened.stale) {
      report.current += 1;
      continue;
    }
    if (await records.reseal(row.id, row.sealed, cipher.seal(opened.text, row.id), clock.now()))
      report.rewritten += 1;
  }
  return report;
}
