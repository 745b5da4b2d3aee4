import { millis, text, time } from './columns.js';
import { index, table } from './table.js';

/**
 * Signed-in sessions of the web console, one row each, found by a digest of the cookie's secret (the secret
 * itself is never stored). A session ends when revoked or after its idle time without a request.
 */
export const consoleSessions = table(
  'console_sessions',
  {
    tokenHash: text('token_hash').primaryKey(),
    teamId: text('team_id').notNull(),
    /** The workspace's Enterprise Grid organisation, when Slack's sign-in named one (links name none). */
    enterpriseId: text('enterprise_id'),
    userId: text('user_id').notNull(),
    /** How the person signed in. */
    via: text('via', { enum: ['slack', 'link'] }).notNull(),
    /** The token a state-changing request must echo (header or form field). */
    csrfToken: text('csrf_token').notNull(),
    createdAt: millis('created_at'),
    lastSeenAt: millis('last_seen_at'),
    revokedAt: time('revoked_at'),
  },
  (t) => [index('console_sessions_user').on(t.teamId, t.userId)],
);

/** One-time sign-in links issued on the server's command line: a digest of each, usable once before it expires. */
export const consoleLinks = table('console_links', {
  tokenHash: text('token_hash').primaryKey(),
  userId: text('user_id').notNull(),
  /** The workspace, when the issuer named one; else the installed workspace. */
  teamId: text('team_id'),
  createdAt: millis('created_at'),
  expiresAt: millis('expires_at'),
  usedAt: time('used_at'),
});
