import type { types } from '@slack/bolt';
import type { ApprovalRecord } from '../../approvals/approval.js';
import { describeChange, diffArguments } from '../../approvals/argument-diff.js';
import type { Risk } from '../../approvals/risk.js';
import { cutWithin, preformatted } from './approval-lines.js';

type KnownBlock = types.KnownBlock;

/** Characters of a preview shown (it is at most two short lines already; a section holds 3,000). */
const PREVIEW_BUDGET = 600;
/** Characters of the list of changes shown under an edited approval. */
const CHANGES_BUDGET = 1500;

const RISK_LABEL: Record<Risk, string> = {
  low: ':large_green_circle: Low risk',
  medium: ':large_yellow_circle: Medium risk',
  high: ':large_orange_circle: *High risk*',
  critical: ':red_circle: *Critical risk*',
};

/** The label of the risk the policy gives a request, or undefined when it gives none. */
export function riskLabel(approval: Pick<ApprovalRecord, 'rule'>): string | undefined {
  return approval.rule.risk ? RISK_LABEL[approval.rule.risk] : undefined;
}

/**
 * The preview as mrkdwn (already escaped when it was made: values cannot mention anyone), cut to fit; undefined
 * when the request has none.
 */
export function previewText(approval: Pick<ApprovalRecord, 'preview'>): string | undefined {
  if (!approval.preview) return undefined;
  return cutWithin(approval.preview, PREVIEW_BUDGET, '…').replace(/&[a-z]{0,3}…$/, '…');
}

/** The risk and the preview on one or more lines, for a list entry (App Home); undefined when neither. */
export function judgementText(approval: Pick<ApprovalRecord, 'rule' | 'preview'>): string | undefined {
  const parts = [riskLabel(approval), previewText(approval)].filter((part) => part !== undefined);
  return parts.length === 0 ? undefined : parts.join('\n');
}

/** The card's lines above the arguments: the risk label and what the call would do. */
export function judgementBlocks(approval: ApprovalRecord, blockId: string): KnownBlock[] {
  const text = judgementText(approval);
  return text === undefined ? [] : [{ type: 'section', block_id: blockId, text: { type: 'mrkdwn', text } }];
}

/**
 * What an edit changed, one line per field (`text: "hi" → "hello"`, `+ labels: […]`, `- cc: "…"`), shown
 * literally (no markup in the arguments can render), redacted as arguments are.
 */
export function changesBlocks(approval: ApprovalRecord, blockId: string): KnownBlock[] {
  if (!approval.editedArguments) return [];
  const changes = diffArguments(approval.arguments, approval.editedArguments);
  const lines = changes.length === 0 ? ['(no change)'] : changes.map(describeChange);
  const text = lines.join('\n');
  return [
    preformatted(blockId, cutWithin(text, CHANGES_BUDGET, `\n… (truncated; ${changes.length} changes)`)),
  ];
}
