import type { ApprovalPolicy } from '../approvals/policy.js';
import { type AuditInput, auditEvent } from './audit-event.js';

/**
 * The policy in force from start-up, per registered tool: whether approval is required and the rule, so the log
 * shows which rules applied when, even after the policy file changes.
 */
export function policyLoadedEvent(
  policy: ApprovalPolicy,
  toolNames: readonly string[],
  source: string,
  at: number,
): AuditInput {
  const tools = Object.fromEntries(toolNames.map((name) => [name, policy.forTool(name)]));
  return auditEvent('policy.loaded', { at, payload: { source, tools } });
}
