import { auditEvent } from '../audit/audit-event.js';
import type { Clock } from '../clock.js';
import { APP_REMOVED, type ApprovalRecord, approvalScope } from './approval.js';
import type { ApprovalTimerStore } from './ports.js';
import type { RemovedWorkspaces } from './removed-workspaces.js';

/**
 * When the app is removed from workspaces (uninstalled, or its bot token revoked; see {@link workspacesLeft}),
 * nobody there can decide its requests any more: each pending one expires at once (`expired`, reason `app_removed`, audited as
 * `approval.expired` with that reason), so its reminders and escalations never fire and its run is told the app
 * was removed, never that someone refused. What follows each expiry is the caller's (the decision follow-up).
 */
export function expireRemovedWorkspace(
  store: Pick<ApprovalTimerStore, 'expireWorkspace'>,
  scope: RemovedWorkspaces,
  removal: 'app_uninstalled' | 'tokens_revoked',
  clock: Clock,
): Promise<{ approval: ApprovalRecord; runClaimed: boolean }[]> {
  const now = clock.now();
  return store.expireWorkspace(scope, now, APP_REMOVED, (approval) => [
    auditEvent('approval.expired', {
      at: now,
      ...approvalScope(approval),
      payload: {
        tool: approval.toolName,
        callId: approval.callId,
        rule: approval.rule,
        reason: APP_REMOVED,
        removal,
      },
    }),
  ]);
}
