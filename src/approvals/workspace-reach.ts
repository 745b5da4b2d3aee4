/** Where a request or a person belongs in Slack: a workspace, and its organisation on Enterprise Grid. */
export interface WorkspacePlace {
  teamId: string;
  /** The Enterprise Grid organisation, as Slack named it in the event or the signed payload; absent outside Grid. */
  enterpriseId?: string | undefined;
}

/**
 * Whether a person acting from `from` may reach a request of `request` at all: the same workspace, or, on
 * Enterprise Grid, a workspace of the same organisation (a card in a channel shared between two workspaces of
 * the org is clicked from either). The organisation counts only when both sides carry the same enterprise ID,
 * so a request stored without one is reached from its own workspace alone. Reaching a request gives no right:
 * whether the person may see or decide it is then the rule's answer, exactly as for someone of its workspace
 * (the approver's workspace is never a permission). Anything else is as unknown as a forged ID.
 */
export function mayReach(request: WorkspacePlace, from: WorkspacePlace): boolean {
  if (request.teamId === from.teamId) return true;
  return request.enterpriseId !== undefined && request.enterpriseId === from.enterpriseId;
}

/**
 * Whether a workspace belongs to an Enterprise Grid organisation, as Slack's installations say: what a signed
 * payload names is checked against it before the organisation lets anyone reach another workspace's request.
 */
export interface OrganisationDirectory {
  belongs(teamId: string, enterpriseId: string): Promise<boolean>;
}

/**
 * `mayReach`, with the organisation the person's payload names confirmed by `organisations` when it is what
 * lets them reach the request (without a directory, as Slack named it: one install serves one organisation).
 */
export async function reaches(
  request: WorkspacePlace,
  from: WorkspacePlace,
  organisations: OrganisationDirectory | undefined,
): Promise<boolean> {
  if (request.teamId === from.teamId) return true;
  if (!mayReach(request, from) || from.enterpriseId === undefined) return false;
  return organisations ? organisations.belongs(from.teamId, from.enterpriseId) : true;
}
