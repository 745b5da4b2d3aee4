import { z } from 'zod';
import type { BatchOutcome, BatchSkip } from '../conversations/batch-decisions.js';
import { MAX_BATCH } from '../conversations/batch-decisions.js';
import { decodeApprovalButtonValue, encodeApprovalButtonValue } from './button-value.js';
import { ALREADY_VOTED, alreadyDecided, UNKNOWN_BUTTON } from './clicks/refusals.js';
import { ACTION_IDS } from './ids.js';

const selection = z.object({
  values: z.record(
    z.string(),
    z.record(
      z.string(),
      z.object({ selected_options: z.array(z.object({ value: z.unknown() })).nullish() }).passthrough(),
    ),
  ),
});

/**
 * The approval ids ticked in a Home view, as Slack sends its state with a click on a batch button
 * (`view.state.values[block_id]["approval:select"].selected_options[].value`), in the view's order. A value
 * that is not an approval id is left out: each id is checked against the clicker as a button's would be.
 */
export function selectedApprovals(state: unknown): string[] {
  const parsed = selection.safeParse(state);
  if (!parsed.success) return [];
  const ids: string[] = [];
  for (const actions of Object.values(parsed.data.values)) {
    for (const option of actions[ACTION_IDS.select]?.selected_options ?? []) {
      const decoded = decodeApprovalButtonValue(option.value);
      if (decoded.ok && !ids.includes(decoded.approvalId)) ids.push(decoded.approvalId);
    }
  }
  return ids;
}

const metadataSchema = z.object({ ids: z.array(z.string()).min(1).max(MAX_BATCH) });

/**
 * The selection a Reject selected modal carries (at most 50 ids, under Slack's 3,000 characters). It needs no
 * signature: it names no channel, card or person, and each id is checked against the verified submitter.
 */
export function encodeBatchMetadata(ids: readonly string[]): string {
  return JSON.stringify({ ids: ids.slice(0, MAX_BATCH).map(encodeApprovalButtonValue) });
}

export function decodeBatchMetadata(value: string): string[] | undefined {
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    return undefined;
  }
  const parsed = metadataSchema.safeParse(json);
  if (!parsed.success) return undefined;
  const ids = parsed.data.ids.map(decodeApprovalButtonValue);
  return ids.every((id) => id.ok) ? ids.flatMap((id) => (id.ok ? [id.approvalId] : [])) : undefined;
}

/** The answer when a batch button is clicked with nothing ticked. */
export const NOTHING_SELECTED =
  'Nothing was selected, so nothing changed. Tick the requests first, then click Approve selected or Reject selected.';

/** What a batch decision tells the person in Slack: what it decided, then each skipped request and why. */
export function batchSummary(outcome: BatchOutcome, vote: 'approve' | 'reject'): string {
  const done = outcome.decided.length;
  const lines = [
    `${vote === 'approve' ? 'Approved' : 'Rejected'} ${done} ${done === 1 ? 'request' : 'requests'}.`,
  ];
  if (outcome.counted.length > 0)
    lines.push(
      `Your approval was counted on ${outcome.counted.length} more that ${outcome.counted.length === 1 ? 'needs' : 'need'} other approvers too: ${outcome.counted.map((a) => `\`${a.toolName}\``).join(', ')}.`,
    );
  if (outcome.skipped.length > 0) {
    lines.push(`Skipped ${outcome.skipped.length}:`);
    for (const skip of outcome.skipped) lines.push(`• ${skipLine(skip)}`);
  }
  return lines.join('\n');
}

function skipLine(skip: BatchSkip): string {
  switch (skip.kind) {
    case 'not_found':
      return `${skip.approvalId}: ${UNKNOWN_BUTTON}`;
    case 'not_allowed':
      return `${skip.approvalId}: ${skip.message}`;
    case 'already_voted':
      return `\`${skip.approval.toolName}\` (${skip.approvalId}): ${ALREADY_VOTED}`;
    case 'already_decided':
      return `\`${skip.approval.toolName}\` (${skip.approvalId}): ${alreadyDecided(skip.approval)}`;
    case 'failed':
      return `${skip.approvalId}: I could not record the decision because of a problem on my side; nothing changed, please try again.`;
    case 'too_many':
      return `${skip.approvalId}: not decided; at most ${MAX_BATCH} requests are decided at once.`;
  }
}
