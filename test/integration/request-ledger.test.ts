import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApprovalClick } from '../../src/approvals/click-inbox.js';
import { DATABASE_KINDS, openTestStores, type TestStores } from '../support/test-database.js';

const click = (value: string): ApprovalClick => ({
  value,
  standing: false,
  userId: 'U2',
  teamId: 'T1',
  channelId: 'C1',
  messageTs: '1.1',
  threadTs: '1.0',
});

/**
 * Requests that arrive together are accepted in one insert: each key is still accepted once, first come first
 * served, within a call, across calls and across processes.
 */
describe.each(DATABASE_KINDS)('accepted requests on %s', (kind) => {
  let a: TestStores;
  let b: TestStores;
  beforeEach(async () => {
    a = await openTestStores(kind);
    b = await a.another();
  });
  afterEach(async () => a.close());

  it('a key given twice in one call is new only the first time, and never again after', async () => {
    const keys = ['k1', 'k2', 'k1', 'k3', 'k2'];
    expect(await a.stores.requests.accept(keys.map((key) => ({ key })))).toEqual([
      true,
      true,
      false,
      true,
      false,
    ]);
    expect(await b.stores.requests.accept([{ key: 'k4' }, { key: 'k3' }])).toEqual([true, false]);
  });

  it('a request forgotten (not taken in after all) is new again; a click never is', async () => {
    await a.stores.requests.accept([{ key: 'event:Ev1' }, { key: 'c1', click: click('apr_1') }]);
    await a.stores.requests.forget('event:Ev1');
    await a.stores.requests.forget('c1');
    expect(await b.stores.requests.accept([{ key: 'event:Ev1' }, { key: 'c1' }])).toEqual([true, false]);
  });

  it('two processes accepting the same many keys at once accept each exactly once', async () => {
    // More keys than one insert carries, in different orders.
    const keys = Array.from({ length: 1_203 }, (_, i) => `key-${i}`);
    const [first, second] = await Promise.all([
      a.stores.requests.accept(keys.map((key) => ({ key }))),
      b.stores.requests.accept([...keys].reverse().map((key) => ({ key }))),
    ]);
    const secondInOrder = [...(second ?? [])].reverse();
    keys.forEach((key, i) => {
      expect([first?.[i], secondInOrder[i]].filter(Boolean), key).toHaveLength(1);
    });
  });

  it("a click's row is its inbox entry: accepted with its click, taken over once its lease runs out", async () => {
    const fresh = await a.stores.requests.accept([
      { key: 'c1', click: click('apr_1') },
      { key: 'e1' },
      { key: 'c2', click: click('apr_2') },
    ]);
    expect(fresh).toEqual([true, true, true]);
    await a.stores.requests.clickDecided('c1');
    const later = await openLater(a);
    expect((await later.stores.requests.takeOverdueClicks(10)).map((c) => [c.key, c.click.value])).toEqual([
      ['c2', 'apr_2'],
    ]);
  });
});

/** Another process whose clock is past every lease taken now. */
function openLater(s: TestStores) {
  const at = Date.now() + 3_600_000;
  return s.another({ clock: { now: () => at } });
}
