import type { Stores } from '../../src/db/stores.js';

/** A switch for `failingStores`: while `down`, every store call fails as a lost database connection does. */
export interface DatabaseOutage {
  down: boolean;
  /** Every store call so far, by `store.method`. */
  calls: string[];
  /** Store calls refused so far, by `store.method`. */
  refused: string[];
}

/**
 * The stores with every call failing while `outage.down` (as `pg` fails when PostgreSQL is unreachable), for
 * `BotOverrides.stores`: the bot's code above the stores is the real one.
 */
export function failingStores(stores: Stores, outage: DatabaseOutage): Stores {
  const wrapped: Record<string, unknown> = {};
  for (const [name, store] of Object.entries(stores)) {
    wrapped[name] = new Proxy(store as object, {
      get(target, property, receiver) {
        const value: unknown = Reflect.get(target, property, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          outage.calls.push(`${name}.${String(property)}`);
          if (!outage.down) return value.apply(target, args);
          outage.refused.push(`${name}.${String(property)}`);
          return Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
        };
      },
    });
  }
  return wrapped as unknown as Stores;
}
