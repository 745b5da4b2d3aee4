import { and, eq } from 'drizzle-orm';
import type { GreetingStore } from '../conversations/welcome-service.js';
import type { Db } from './database.js';
import { greetedUsers } from './schema.js';

/** Greetings as rows: the unique index makes the first insert win, whatever the number of racing visits. */
export function createGreetingStore(db: Db): GreetingStore {
  return {
    claim(teamId, userId, at) {
      const { changes } = db
        .insert(greetedUsers)
        .values({ teamId, userId, createdAt: at })
        .onConflictDoNothing()
        .run();
      return changes === 1;
    },
    release(teamId, userId) {
      db.delete(greetedUsers)
        .where(and(eq(greetedUsers.teamId, teamId), eq(greetedUsers.userId, userId)))
        .run();
    },
  };
}
