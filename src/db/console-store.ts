import { sql } from 'drizzle-orm';
import type { ConsoleLinkStore, ConsoleSession, ConsoleSessionStore } from '../console/ports.js';
import { readEnum, readNumber, readOptionalNumber, readOptionalString, readString } from './sql/columns.js';
import { audit, count, type Row, row, rows } from './sql/program.js';
import type { StoreContext } from './store-context.js';

function toSession(r: Row): ConsoleSession {
  return {
    teamId: readString(r, 'team_id'),
    enterpriseId: readOptionalString(r, 'enterprise_id'),
    userId: readString(r, 'user_id'),
    via: readEnum(r, 'via', ['slack', 'link'] as const),
    csrfToken: readString(r, 'csrf_token'),
    createdAt: readNumber(r, 'created_at'),
    lastSeenAt: readNumber(r, 'last_seen_at'),
    revokedAt: readOptionalNumber(r, 'revoked_at'),
  };
}

/** The console's sessions, with their audit events in the same transaction. */
export function createConsoleSessionStore({ db }: StoreContext): ConsoleSessionStore {
  return {
    open(tokenHash, s, events, forgetBefore) {
      return db.write(function* () {
        yield* count(sql`delete from console_sessions where last_seen_at < ${forgetBefore}`);
        yield* count(sql`insert into console_sessions
          (token_hash, team_id, enterprise_id, user_id, via, csrf_token, created_at, last_seen_at)
          values (${tokenHash}, ${s.teamId}, ${s.enterpriseId}, ${s.userId}, ${s.via}, ${s.csrfToken}, ${s.createdAt},
            ${s.lastSeenAt})`);
        yield* audit(events);
      });
    },
    find: (tokenHash) =>
      db.read(function* () {
        const found = yield* row(sql`select * from console_sessions where token_hash = ${tokenHash}`);
        return found ? toSession(found) : undefined;
      }),
    touch(tokenHash, at) {
      return db.write(function* () {
        yield* count(sql`update console_sessions set last_seen_at = ${at}
          where token_hash = ${tokenHash} and last_seen_at < ${at}`);
      });
    },
    revoke(tokenHash, at, events) {
      return db.write(function* () {
        const ended = yield* count(sql`update console_sessions set revoked_at = ${at}
          where token_hash = ${tokenHash} and revoked_at is null`);
        if (ended > 0) yield* audit(events);
        return ended > 0;
      });
    },
    revokeAll(at, activeSince, events) {
      return db.write(function* () {
        const ended = yield* count(sql`update console_sessions set revoked_at = ${at}
          where revoked_at is null and last_seen_at >= ${activeSince}`);
        yield* audit(events(ended));
        return ended;
      });
    },
  };
}

/** One-time sign-in links: a redemption is one conditional update, so of two racing, one wins. */
export function createConsoleLinkStore({ db }: StoreContext): ConsoleLinkStore {
  return {
    issue(tokenHash, link, events, forgetBefore) {
      return db.write(function* () {
        yield* count(sql`delete from console_links where expires_at < ${forgetBefore}`);
        yield* count(sql`insert into console_links (token_hash, user_id, team_id, created_at, expires_at)
          values (${tokenHash}, ${link.userId}, ${link.teamId}, ${link.createdAt}, ${link.expiresAt})`);
        yield* audit(events);
      });
    },
    redeem(tokenHash, at) {
      return db.write(function* () {
        const used = yield* rows(sql`update console_links set used_at = ${at}
          where token_hash = ${tokenHash} and used_at is null and expires_at > ${at} returning *`);
        const link = used[0];
        if (!link) return undefined;
        return {
          userId: readString(link, 'user_id'),
          teamId: readOptionalString(link, 'team_id'),
          createdAt: readNumber(link, 'created_at'),
          expiresAt: readNumber(link, 'expires_at'),
        };
      });
    },
  };
}
