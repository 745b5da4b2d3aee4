/** The time, in epoch milliseconds: one source for every part, so tests can move it. */
export interface Clock {
  now(): number;
}
