/**
 * At most `size` runs driven at once in one thread; the others wait their turn in arrival order. A run
 * waiting here is already taken in and leased to this process (its lease is renewed while it waits), so a burst
 * of conversations costs memory for `size` runs at a time, not for all of them.
 */
export class RunSlots {
  readonly #size: number;
  #busy = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(size: number) {
    this.#size = size;
  }

  /** Resolves, once a slot is free, with the function that frees it (call it once). */
  async take(): Promise<() => void> {
    if (this.#busy >= this.#size) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    else this.#busy += 1;
    return () => {
      // Handed straight to the next in line, or freed.
      const next = this.#waiting.shift();
      if (next) next();
      else this.#busy -= 1;
    };
  }
}
