import { type SQL, sql } from 'drizzle-orm';
import type { RemovedWorkspaces } from '../approvals/removed-workspaces.js';

/**
 * The rows of a table aliased `alias` (with `team_id` and `enterprise_id`) in the workspaces a removal left
 * without the app: one workspace, or an organisation's but those it keeps.
 */
export function inRemovedWorkspaces(alias: string, scope: RemovedWorkspaces): SQL {
  const column = (name: string) => sql.raw(`${alias}.${name}`);
  if ('teamId' in scope) return sql`${column('team_id')} = ${scope.teamId}`;
  const organisation = sql`${column('enterprise_id')} = ${scope.enterpriseId}`;
  return scope.keptTeamIds.length === 0
    ? organisation
    : sql`${organisation} and ${column('team_id')} not in ${[...scope.keptTeamIds]}`;
}
