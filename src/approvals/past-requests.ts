import { prunedArgumentsLimit } from '../audit/retention.js';
import { askingAgent } from './approval.js';
import type { ApprovalReports, AuditLogQueries } from './audit-queries.js';
import type { PastRequest } from './policy-replay.js';
import { jsonObject } from './policy-rules.js';

/** The requests a policy replay goes over, and those retention left without arguments (counted, not replayed). */
export interface PastRequests {
  requests: PastRequest[];
  pruned: { count: number; limits: Set<string> };
}

/**
 * Every `approval.requested` event since `since` (of one workspace when `teamId` is given), with its request's
 * channel, rule, status and votes; those whose arguments retention removed are only counted, with the limits
 * they were removed under: replayed without their arguments they would look like calls the rules cannot
 * evaluate. What `npm run policy -- replay` and the console's replay both read.
 */
export async function pastRequests(
  queries: AuditLogQueries & ApprovalReports,
  scope: { since?: number | undefined; teamId?: string | undefined },
): Promise<PastRequests> {
  const events = await queries.events({
    ...(scope.since === undefined ? {} : { since: scope.since }),
    ...(scope.teamId === undefined ? {} : { teamId: scope.teamId }),
  });
  const requests: PastRequest[] = [];
  const pruned = { count: 0, limits: new Set<string>() };
  for (const event of events) {
    if (event.kind !== 'approval.requested' || !event.approvalId || !event.teamId) continue;
    const detail = await queries.detail(event.teamId, event.approvalId);
    if (!detail) continue;
    const { approval } = detail;
    const limit = prunedArgumentsLimit(approval.arguments);
    if (limit !== undefined) {
      pruned.count += 1;
      pruned.limits.add(limit || 'retention');
      continue;
    }
    const onBehalfOf = new Map<string, string>();
    for (const e of detail.events) {
      const delegator = e.payload.onBehalfOf;
      if (typeof delegator === 'string') onBehalfOf.set(e.actor, delegator);
    }
    requests.push({
      approvalId: approval.id,
      at: event.at,
      teamId: approval.teamId,
      tool: approval.toolName,
      requesterId: approval.requesterId,
      channelId: approval.channelId,
      args: jsonObject(approval.arguments),
      agent: askingAgent(approval),
      rule: approval.rule,
      status: approval.status,
      votes: detail.votes.map((v) => {
        const delegator = onBehalfOf.get(v.userId);
        return { userId: v.userId, vote: v.vote, ...(delegator ? { onBehalfOf: delegator } : {}) };
      }),
    });
  }
  return { requests, pruned };
}
