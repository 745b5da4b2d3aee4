import { lt } from 'drizzle-orm';
import type { DedupeStore } from '../conversations/ports.js';
import type { Db } from './database.js';
import { processedEvents } from './schema.js';

export function createDedupeStore(db: Db, now: () => number): DedupeStore {
  return {
    claim(keys) {
      return db.transaction(
        (tx) => {
          const at = now();
          let fresh = true;
          for (const key of keys) {
            const { changes } = tx
              .insert(processedEvents)
              .values({ key, createdAt: at })
              .onConflictDoNothing()
              .run();
            if (changes === 0) fresh = false;
          }
          return fresh;
        },
        { behavior: 'immediate' },
      );
    },
    prune(before) {
      db.delete(processedEvents).where(lt(processedEvents.createdAt, before)).run();
    },
  };
}
