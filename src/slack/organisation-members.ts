import { z } from 'zod';
import type { OrganisationDirectory } from '../approvals/workspace-reach.js';
import type { Clock } from '../clock.js';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { SlackClients } from './installations/team-clients.js';

/** Workspaces rarely join or leave an organisation's install: five minutes keeps clicks from another fast. */
export const ORGANISATION_CACHE_MS = 5 * 60_000;
/** Answers kept at most; the oldest is forgotten first. */
const CACHE_ENTRIES = 1_000;
/** Pages of `auth.teams.list` read at most (a thousand workspaces). */
const MAX_PAGES = 10;

const authTestSchema = z.object({
  team_id: z.string().optional(),
  enterprise_id: z.string().optional(),
  is_enterprise_install: z.boolean().optional(),
});
const teamsSchema = z.object({
  teams: z.array(z.object({ id: z.string() })).default([]),
  response_metadata: z.object({ next_cursor: z.string().optional() }).optional(),
});

/**
 * Whether a workspace belongs to an organisation, asked of the installation that serves it (installs into
 * several workspaces): `auth.test` of that token names its organisation, so a workspace installed on its own
 * outside the organisation is never taken for one of it, whatever its payload says; a token of an org-wide
 * install then lists the workspaces it was granted (`auth.teams.list`). Answers are kept for `ttlMs`; a lookup
 * that fails answers no (and is not kept).
 */
export function createOrganisationDirectory(
  clients: SlackClients,
  clock: Clock,
  logger: Logger,
  ttlMs = ORGANISATION_CACHE_MS,
): OrganisationDirectory {
  const cache = new Map<string, { belongs: boolean; until: number }>();
  const lookUp = async (teamId: string, enterpriseId: string): Promise<boolean> => {
    const client = clients.forTeam(teamId, enterpriseId);
    const token = authTestSchema.parse(await client.auth.test());
    if (token.enterprise_id !== enterpriseId) return false;
    if (!token.is_enterprise_install) return token.team_id === teamId;
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page += 1) {
      const listed = teamsSchema.parse(
        await client.auth.teams.list({ limit: 100, ...(cursor ? { cursor } : {}) }),
      );
      if (listed.teams.some((team) => team.id === teamId)) return true;
      cursor = listed.response_metadata?.next_cursor || undefined;
      if (!cursor) return false;
    }
    return false;
  };
  return {
    async belongs(teamId, enterpriseId) {
      const key = `${enterpriseId}:${teamId}`;
      const cached = cache.get(key);
      if (cached && cached.until > clock.now()) return cached.belongs;
      try {
        const belongs = await lookUp(teamId, enterpriseId);
        cache.delete(key);
        if (cache.size >= CACHE_ENTRIES) cache.delete(cache.keys().next().value ?? '');
        cache.set(key, { belongs, until: clock.now() + ttlMs });
        if (!belongs)
          logger.warn('a payload named an organisation its workspace is not part of', {
            teamId,
            enterpriseId,
          });
        return belongs;
      } catch (error) {
        logger.warn('organisation lookup failed', { teamId, enterpriseId, error: describeError(error) });
        return false;
      }
    },
  };
}
