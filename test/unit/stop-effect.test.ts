import { describe, expect, it } from 'vitest';
import { stopEffect } from '../../src/conversations/stop-permission.js';

describe('what a stop request does to the active run', () => {
  const first = { by: 'U1', at: 100 };
  const second = { by: 'U2', at: 200 };

  it('keeps the first request: a second stopper changes nothing', () => {
    expect(stopEffect('running', undefined, first).kept).toEqual(first);
    expect(stopEffect('running', first, second).kept).toEqual(first);
    expect(stopEffect('paused', first, second).kept).toEqual(first);
  });

  it('takes a paused run over to end it at once, and leaves a running one to its driver', () => {
    expect(stopEffect('paused', undefined, first).takeOver).toBe(true);
    expect(stopEffect('running', undefined, first).takeOver).toBe(false);
  });
});
