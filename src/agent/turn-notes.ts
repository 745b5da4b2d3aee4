import type { ApprovalRecord } from '../approvals/approval.js';
import { limitNote } from '../approvals/limit-outcome.js';

/**
 * What the thread is told once a turn's requests are stored: each automatic approval that held (a limit may
 * have refused the call or sent it to admins instead), and each request a limit refused or sent to admins.
 */
export function turnNotes(
  planned: readonly { approvalId: string; text: string }[],
  stored: readonly ApprovalRecord[],
): string[] {
  const byId = new Map(stored.map((approval) => [approval.id, approval]));
  const automatic = planned.filter((note) => byId.get(note.approvalId)?.status === 'approved');
  const limited = stored.flatMap((approval) => {
    const reached = approval.rule.limitReached;
    return reached ? [limitNote(approval.toolName, reached, approval.status === 'pending')] : [];
  });
  return [...automatic.map((note) => note.text), ...limited];
}
