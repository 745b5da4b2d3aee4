/**
 * Times to decision are counted per bucket, not kept one by one (the database's daily totals,
 * src/db/schema/daily-totals.ts): bucket `b` holds the waits from 1.1^b ms up to 1.1^(b+1) ms, so the charts and
 * `/approvals stats` read a bounded number of rows however many requests were decided. A percentile read from
 * the buckets is the middle of its bucket: within 5 % of the exact one.
 */
export const WAIT_BUCKET_GROWTH = 1.1;

/** The bucket of a wait in milliseconds (as the database's triggers compute it; waits under 1 ms count as 1). */
export function waitBucket(waitMs: number): number {
  return Math.floor(Math.log(Math.max(waitMs, 1)) / Math.log(WAIT_BUCKET_GROWTH));
}

/** The wait a bucket stands for: its geometric middle, in whole milliseconds. */
export function bucketWait(bucket: number): number {
  return Math.round(WAIT_BUCKET_GROWTH ** (bucket + 0.5));
}

/** How many decided requests fell in each bucket. */
export interface WaitBucketCount {
  bucket: number;
  count: number;
}

/**
 * The median of the counted waits: the middle one, or with an even count the mean of the two middle ones (each
 * the middle of its bucket, so within 5 % too); null when nothing was counted.
 */
export function bucketMedian(buckets: readonly WaitBucketCount[]): number | null {
  const total = buckets.reduce((sum, b) => sum + b.count, 0);
  if (total === 0) return null;
  const lower = atRank(buckets, Math.ceil(total / 2));
  const upper = atRank(buckets, Math.floor(total / 2) + 1);
  return (lower + upper) / 2;
}

/** The wait at `rank` (1 = the shortest) of the counted waits, as the middle of its bucket. */
function atRank(buckets: readonly WaitBucketCount[], rank: number): number {
  let seen = 0;
  const sorted = [...buckets].sort((x, y) => x.bucket - y.bucket);
  for (const b of sorted) {
    seen += b.count;
    if (seen >= rank) return bucketWait(b.bucket);
  }
  return bucketWait(sorted.at(-1)?.bucket ?? 0);
}

/**
 * The p-th percentile (0 < p ≤ 1) by nearest rank over the counted waits, as the middle of the bucket that holds
 * that rank; null when nothing was counted.
 */
export function bucketPercentile(buckets: readonly WaitBucketCount[], p: number): number | null {
  const total = buckets.reduce((sum, b) => sum + b.count, 0);
  if (total === 0) return null;
  return atRank(buckets, Math.max(Math.ceil(p * total), 1));
}

/**
 * A wait read from the buckets as people read it, rounded to the last unit shown (not cut down to it, which
 * would turn a 3-minute median read as 2m 52s into "2m"): `45s`, `3m`, `2h 5m`, `1d 4h`.
 */
export function approximateDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.round(ms / 60_000);
  if (m < 60) return `${m}m`;
  if (m < 24 * 60) return m % 60 ? `${Math.floor(m / 60)}h ${m % 60}m` : `${m / 60}h`;
  const h = Math.round(ms / 3_600_000);
  return h % 24 ? `${Math.floor(h / 24)}d ${h % 24}h` : `${h / 24}d`;
}
