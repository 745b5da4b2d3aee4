/**
 * Refused clicks each write an audit row and get a reply; someone clicking a button they may not use, over and
 * over (or a script doing so), is limited per person: past `limit` refusals within `windowMs` the next ones
 * are neither recorded nor answered until the window has passed. Memory is bounded: expired entries are
 * dropped, and at `maxPeople` the oldest entry goes.
 */
export class RefusalLimiter {
  readonly #seen = new Map<string, { count: number; since: number }>();
  readonly #limit: number;
  readonly #windowMs: number;
  readonly #maxPeople: number;

  constructor(options: { limit?: number; windowMs?: number; maxPeople?: number } = {}) {
    this.#limit = options.limit ?? 5;
    this.#windowMs = options.windowMs ?? 60_000;
    this.#maxPeople = options.maxPeople ?? 10_000;
  }

  /** Counts a refusal of `userId` at `now`; false when it is over the limit (stay quiet). */
  allow(userId: string, now: number): boolean {
    const entry = this.#seen.get(userId);
    if (entry && now - entry.since < this.#windowMs) {
      entry.count += 1;
      return entry.count <= this.#limit;
    }
    this.#seen.delete(userId);
    if (this.#seen.size >= this.#maxPeople) this.#prune(now);
    this.#seen.set(userId, { count: 1, since: now });
    return true;
  }

  #prune(now: number): void {
    for (const [user, entry] of this.#seen) if (now - entry.since >= this.#windowMs) this.#seen.delete(user);
    // Still full: forget the oldest (Map keeps insertion order).
    while (this.#seen.size >= this.#maxPeople) {
      const oldest = this.#seen.keys().next().value;
      if (oldest === undefined) break;
      this.#seen.delete(oldest);
    }
  }
}
