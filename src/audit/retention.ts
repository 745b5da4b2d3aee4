import { DIGEST_KEY, PRUNED_KEY, prunedDigest, valueDigest } from './hash-chain.js';

/**
 * Payload keys that hold conversation content: what people and the model wrote (arguments, results, reasons,
 * note texts, previews, an edit's changes). Retention replaces their values with digests; everything else (who, what, when, which tool,
 * the outcome) stays readable.
 */
export const CONTENT_KEYS = [
  'arguments',
  'editedArguments',
  'result',
  'reason',
  'text',
  'message',
  // A preview quotes arguments and data (a note's text); an edit's changes quote the arguments.
  'preview',
  'changes',
] as const;

/** How an event's content was removed: when, and under which limit. */
export interface PruneMark {
  /** When the content was removed (epoch ms). */
  at: number;
  /** The limit it was removed under, as configured: `RETENTION_DAYS=90`, or `--before 90d`. */
  limit: string;
}

/**
 * The payload with its content replaced by digests and a note of when and why, or undefined when it holds no
 * content (left as it is). The payload's digest (hash-chain.ts) is unchanged, so the chain still verifies.
 *
 * @example
 * prunePayload({ tool: 'create_note', arguments: { text: 'hi' } }, { at, limit: 'RETENTION_DAYS=90' })
 * // { tool: 'create_note', arguments: { $digest: '…' }, $pruned: { at: '2026-…', limit: 'RETENTION_DAYS=90', keys: ['arguments'] } }
 */
export function prunePayload(
  payload: Record<string, unknown>,
  mark: PruneMark,
): Record<string, unknown> | undefined {
  const keys = CONTENT_KEYS.filter(
    (key) => payload[key] !== undefined && prunedDigest(payload[key]) === undefined,
  );
  if (keys.length === 0) return undefined;
  const pruned: Record<string, unknown> = { ...payload };
  for (const key of keys) pruned[key] = { [DIGEST_KEY]: valueDigest(payload[key]) };
  pruned[PRUNED_KEY] = { at: new Date(mark.at).toISOString(), limit: mark.limit, keys };
  return pruned;
}

/** What one prune removed, and what it had to keep. */
export interface PruneReport {
  before: number;
  limit: string;
  /** Audit events whose content was replaced by digests. */
  events: number;
  /** Version 1 events older than the limit: their hash covers their payload, so their content stays. */
  keptVersion1: number;
  /** Approvals whose arguments, result and reason were removed. */
  approvals: number;
  /** History items (messages, tool calls and outputs) deleted. */
  items: number;
  /** Runs still waiting for a decision (or running), whose content was left alone. */
  activeRuns: number;
}

export function describePruneReport(report: PruneReport): string {
  return [
    `Removed content older than ${new Date(report.before).toISOString()} (${report.limit}):`,
    `${report.items} history items deleted, ${report.approvals} approvals and ${report.events} audit events pruned to digests.`,
    report.activeRuns > 0
      ? `${report.activeRuns} runs waiting for a decision (or running) were left alone.`
      : undefined,
    report.keptVersion1 > 0
      ? `${report.keptVersion1} audit events written before chain version 2 keep their content (their hash covers it).`
      : undefined,
  ]
    .filter((line) => line !== undefined)
    .join(' ');
}

/** Removes content older than `before` from the database (src/db/retention-store.ts). */
export interface RetentionStore {
  /** A batch (its own short transaction) at a time, `pace` awaited after each that took `batchMs`. */
  prune(before: number, mark: PruneMark, pace?: Pace): Promise<PruneReport>;
}

/** What a prune does between two of its batches, given how long the last one took. */
export type Pace = (batchMs: number) => Promise<void>;

/**
 * The pace of a prune beside a running bot: after a batch that took t ms it waits as long (5 to 200 ms), so it
 * holds the database at most about half the time, and a click waiting behind a batch (SQLite's one writer, or a
 * core on a small machine) gets its turn before the next batch instead of retrying behind batch after batch.
 */
export const yieldToIntake: Pace = (batchMs) =>
  new Promise((resolve) => setTimeout(resolve, Math.min(Math.max(batchMs, 5), 200)));

/** What an approval's arguments become when retention removes them (read back by `prunedArgumentsLimit`). */
export function prunedArgumentsMarker(mark: PruneMark): string {
  return JSON.stringify({ [PRUNED_KEY]: { at: new Date(mark.at).toISOString(), limit: mark.limit } });
}

/**
 * The limit a request's arguments were removed under, when retention replaced them (the approvals table then
 * holds `{"$pruned": {at, limit}}` instead of the call's arguments); else undefined.
 */
export function prunedArgumentsLimit(argumentsJson: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(argumentsJson);
  } catch {
    return undefined;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return undefined;
  const keys = Object.keys(parsed);
  if (keys.length !== 1 || keys[0] !== PRUNED_KEY) return undefined;
  const mark: unknown = (parsed as Record<string, unknown>)[PRUNED_KEY];
  if (mark === null || typeof mark !== 'object' || !('limit' in mark)) return undefined;
  return typeof mark.limit === 'string' ? mark.limit : '';
}
