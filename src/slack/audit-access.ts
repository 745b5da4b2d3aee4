import { z } from 'zod';
import type { Workspace } from '../approvals/team-admins.js';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { SlackClients } from './installations/team-clients.js';

export interface AuditAccess {
  /** May this person see every request of their workspace (the slash command, the admins' App Home)? */
  isAuditor(workspace: Workspace, userId: string): Promise<boolean>;
}

export interface AuditAccessOptions {
  /** The workspace's admins, through `Deciders`. */
  isAdmin(workspace: Workspace, userId: string): Promise<boolean>;
  /** Also Slack workspace admins and owners, looked up with `users.info`. */
  includeWorkspaceAdmins: boolean;
  now(): number;
  logger: Logger;
  cacheMs?: number;
}

const userInfoSchema = z.object({
  user: z.object({
    is_admin: z.boolean().optional(),
    is_owner: z.boolean().optional(),
    is_primary_owner: z.boolean().optional(),
  }),
});

/**
 * Who may audit: configured admins, and optionally workspace admins and owners, asked of the person's own
 * workspace. `users.info` answers are cached (10 minutes by default) so that opening App Home or running the
 * command does not call Slack each time; a failed lookup denies and is not cached.
 */
export function createAuditAccess(clients: SlackClients, options: AuditAccessOptions): AuditAccess {
  const cache = new Map<string, { value: boolean; until: number }>();
  const ttl = options.cacheMs ?? 600_000;
  return {
    async isAuditor(workspace, userId) {
      if (await options.isAdmin(workspace, userId)) return true;
      const { teamId, enterpriseId } = workspace;
      if (!options.includeWorkspaceAdmins) return false;
      const key = `${teamId}:${userId}`;
      const cached = cache.get(key);
      if (cached && cached.until > options.now()) return cached.value;
      try {
        const parsed = userInfoSchema.safeParse(
          await clients.forTeam(teamId, enterpriseId).users.info({ user: userId }),
        );
        const user = parsed.success ? parsed.data.user : {};
        const value = Boolean(user.is_admin || user.is_owner || user.is_primary_owner);
        cache.set(key, { value, until: options.now() + ttl });
        return value;
      } catch (error) {
        options.logger.warn('users.info failed; treating the user as not an admin', {
          userId,
          teamId,
          error: describeError(error),
        });
        return false;
      }
    },
  };
}
