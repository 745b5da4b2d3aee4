import { millis, serialId, text } from './columns.js';
import { index, table } from './table.js';

/**
 * One row per limit key (team, tool or rule, scope value): locked `FOR UPDATE` by every transaction that counts
 * that key, so competing processes count one after another.
 */
export const approvalLimitKeys = table('approval_limit_keys', {
  key: text('key').primaryKey(),
});

/** Requests offered for approval under a limit key, with when: what the limits count. */
export const approvalLimitUses = table(
  'approval_limit_uses',
  {
    id: serialId(),
    key: text('key').notNull(),
    approvalId: text('approval_id').notNull(),
    at: millis('at'),
  },
  (t) => [index('approval_limit_uses_key_at').on(t.key, t.at)],
);
