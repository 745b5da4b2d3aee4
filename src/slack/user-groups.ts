import type { webApi } from '@slack/bolt';
import { z } from 'zod';
import type { GroupDirectory } from '../approvals/ports.js';
import type { Clock } from '../clock.js';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';

const membersSchema = z.object({ users: z.array(z.string()).default([]) });

/** Group membership changes rarely; a minute keeps clicks fast without trusting stale data for long. */
export const GROUP_CACHE_MS = 60_000;

/**
 * Members of Slack user groups through `usergroups.users.list` (scope `usergroups:read`), cached per group
 * for `ttlMs`. A failed lookup is not cached and yields no members: nobody is allowed through a group that
 * cannot be read.
 */
export function createUserGroupDirectory(
  client: webApi.WebClient,
  clock: Clock,
  logger: Logger,
  ttlMs = GROUP_CACHE_MS,
): GroupDirectory {
  const cache = new Map<string, { members: ReadonlySet<string>; until: number }>();
  return {
    async members(groupId) {
      const cached = cache.get(groupId);
      if (cached && cached.until > clock.now()) return cached.members;
      try {
        const reply = await client.usergroups.users.list({ usergroup: groupId });
        const members = new Set(membersSchema.parse(reply).users);
        cache.set(groupId, { members, until: clock.now() + ttlMs });
        return members;
      } catch (error) {
        logger.warn('user group lookup failed', { groupId, error: describeError(error) });
        return new Set();
      }
    },
  };
}
