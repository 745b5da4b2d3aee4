import type { DatabaseProbe, SqlDatabase } from './sql/sql-database.js';

/** How long one probe's answer is reused: a flood of health checks or events costs one probe a second. */
const PROBE_TTL_MS = 1_000;

export interface DatabaseHealth {
  /** The latest probe's answer, probing again when it is older than a second (one probe at a time). */
  check(): Promise<DatabaseProbe>;
}

/**
 * The database's health for `/healthz` and for the gate in front of Slack's requests, probed at most once a
 * second whoever asks (see `SqlDatabase.probe`).
 */
export function createDatabaseHealth(
  db: SqlDatabase,
  now: () => number = Date.now,
  ttlMs = PROBE_TTL_MS,
): DatabaseHealth {
  let latest: { at: number; answer: Promise<DatabaseProbe> } | undefined;
  return {
    check() {
      const at = now();
      if (latest && at - latest.at < ttlMs) return latest.answer;
      const answer = db.probe().catch((error: unknown) => ({
        ok: false as const,
        problem: error instanceof Error ? error.message : 'the probe failed',
      }));
      latest = { at, answer };
      return answer;
    },
  };
}
