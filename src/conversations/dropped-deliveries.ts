import { approvalScope } from '../approvals/approval.js';
import type { RemovedWorkspaces } from '../approvals/removed-workspaces.js';
import { type AuditInput, auditEvent } from '../audit/audit-event.js';
import type { Delivery, DeliveryRetries, OwedDelivery } from './store-ports.js';

/** Why an owed delivery was dropped: the app was removed from its workspace. */
export const DROPPED_APP_REMOVED = 'app_removed';

/**
 * When the app is removed from workspaces (see `workspacesLeft`): every delivery still owed there is dropped at
 * once, each audited as `delivery.dropped` (`reason: app_removed`), so the outbox never tries it with a token
 * that is gone, and a reinstall starts with nothing old to send. Resolves with how many were dropped.
 */
export function dropRemovedWorkspace(
  outbox: Pick<DeliveryRetries, 'dropWorkspace'>,
  scope: RemovedWorkspaces,
  at: number,
): Promise<number> {
  return outbox.dropWorkspace(scope, (owed) => [droppedOwedEvent(owed, at)]);
}

/** `delivery.dropped`: what was owed to a workspace the app was removed from, never to be sent. */
export function droppedEvent(delivery: Delivery, at: number): AuditInput {
  return 'approval' in delivery
    ? droppedOwedEvent(
        {
          kind: delivery.kind,
          ...approvalScope(delivery.approval),
          attempts: delivery.attempts,
        },
        at,
      )
    : droppedOwedEvent(
        {
          kind: delivery.kind,
          teamId: delivery.thread.teamId,
          enterpriseId: delivery.thread.enterpriseId ?? null,
          conversationId: null,
          runId: delivery.runId,
          approvalId: null,
          attempts: delivery.attempts,
        },
        at,
      );
}

/** `delivery.dropped` of a delivery owed in a workspace the app was removed from (see `droppedEvent`). */
export function droppedOwedEvent(
  owed: Omit<OwedDelivery, 'conversationId'> & { conversationId: string | null },
  at: number,
): AuditInput {
  const { kind, attempts, ...scope } = owed;
  return auditEvent('delivery.dropped', {
    at,
    ...scope,
    payload: { kind, attempts, reason: DROPPED_APP_REMOVED },
  });
}
