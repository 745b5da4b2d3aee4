import { sql } from 'drizzle-orm';
import { createdAt, integer, millis, text, time } from './columns.js';
import { index, table, uniqueIndex } from './table.js';

/** Keys of Slack deliveries already handled (event ids and team/channel/ts), for dedupe across retries. */
export const processedEvents = table('processed_events', {
  key: text('key').primaryKey(),
  createdAt: createdAt(),
});

/**
 * Requests from Slack that change something, each accepted once (see src/approvals/click-inbox.ts): an event's
 * id, or a digest of a signed request's timestamp and signature, kept past Slack's 5-minute window. An Approve
 * click's row also holds the click, committed before its ack and leased until it is decided.
 */
export const acceptedRequests = table(
  'accepted_requests',
  {
    key: text('key').primaryKey(),
    acceptedAt: millis('accepted_at'),
    /** The click, as JSON; null for any other request. */
    click: text('click'),
    leaseOwner: text('lease_owner'),
    leaseUntil: time('lease_until'),
    decidedAt: time('decided_at'),
  },
  (t) => [
    index('accepted_requests_accepted').on(t.acceptedAt),
    index('accepted_requests_leased').on(t.leaseUntil).where(sql`${t.leaseOwner} is not null`),
  ],
);

/** People who opened the app's Home tab: their views are refreshed when a request that concerns them changes. */
export const homeViewers = table(
  'home_viewers',
  {
    teamId: text('team_id').notNull(),
    userId: text('user_id').notNull(),
    /** 1 when the viewer saw the admins' view (every request of the workspace). */
    auditor: integer('auditor').notNull(),
    openedAt: millis('opened_at'),
  },
  (t) => [uniqueIndex('home_viewers_user').on(t.teamId, t.userId)],
);

/** People the bot has greeted in its Messages tab: one row each, so nobody is greeted twice. */
export const greetedUsers = table(
  'greeted_users',
  {
    teamId: text('team_id').notNull(),
    userId: text('user_id').notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('greeted_users_user').on(t.teamId, t.userId)],
);
