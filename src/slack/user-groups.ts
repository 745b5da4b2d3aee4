import { z } from 'zod';
import type { GroupDirectory } from '../approvals/ports.js';
import type { Clock } from '../clock.js';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { SlackClients } from './installations/team-clients.js';

const membersSchema = z.object({ users: z.array(z.string()).default([]) });

/** Group membership changes rarely; a minute keeps clicks fast without trusting stale data for long. */
export const GROUP_CACHE_MS = 60_000;

/**
 * Members of Slack user groups through `usergroups.users.list` (scope `usergroups:read`), cached per group
 * for `ttlMs`. A failed lookup is not cached and yields no members: nobody is allowed through a group that
 * cannot be read.
 */
export function createUserGroupDirectory(
  clients: SlackClients,
  clock: Clock,
  logger: Logger,
  ttlMs = GROUP_CACHE_MS,
): GroupDirectory {
  const cache = new Map<string, { members: ReadonlySet<string>; until: number }>();
  return {
    async members(groupId, teamId) {
      // Asked of the workspace the request belongs to, with its own token.
      const key = `${teamId}:${groupId}`;
      const cached = cache.get(key);
      if (cached && cached.until > clock.now()) return cached.members;
      try {
        const reply = await clients.forTeam(teamId).usergroups.users.list({ usergroup: groupId });
        const members = new Set(membersSchema.parse(reply).users);
        cache.set(key, { members, until: clock.now() + ttlMs });
        return members;
      } catch (error) {
        logger.warn('user group lookup failed', { groupId, teamId, error: describeError(error) });
        return new Set();
      }
    },
  };
}
