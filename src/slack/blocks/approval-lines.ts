import type { types } from '@slack/bolt';
import { type ApprovalRecord, type ApprovalStatus, callChain } from '../../approvals/approval.js';
import { redactedArguments } from '../../redact.js';
import { escapeMrkdwn, slackDate, truncateVisibly } from '../mrkdwn.js';

type KnownBlock = types.KnownBlock;

const STATUS_EMOJI: Record<ApprovalStatus, string> = {
  pending: ':lock:',
  approved: ':white_check_mark:',
  executing: ':white_check_mark:',
  executed: ':white_check_mark:',
  rejected: ':x:',
  expired: ':hourglass:',
  cancelled: ':no_entry_sign:',
};

/** The decision behind a status: an executing or executed call was approved. */
const OUTCOME: Record<ApprovalStatus, string> = {
  pending: 'pending',
  approved: 'approved',
  executing: 'approved',
  executed: 'approved',
  rejected: 'rejected',
  expired: 'expired',
  cancelled: 'cancelled',
};

/**
 * Text escaped for mrkdwn and then cut to `max` characters (escaping can grow it up to five times), never
 * inside an entity, with `note` saying it was cut.
 */
export function escapedWithin(text: string, max: number, note: string): string {
  const escaped = escapeMrkdwn(text);
  if (escaped.length <= max) return escaped;
  return `${escaped.slice(0, Math.max(0, max - note.length)).replace(/&[a-z]{0,3}$/, '')}${note}`;
}

/**
 * Text cut to `max` characters with `note` saying so, for places Slack shows literally (no escaping needed).
 * Never cuts inside a surrogate pair.
 */
export function cutWithin(text: string, max: number, note: string): string {
  if (text.length <= max) return text;
  let end = Math.max(0, max - note.length);
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}${note}`;
}

/**
 * A block showing `text` exactly as it is, in a monospace box: a `rich_text` block with one
 * `rich_text_preformatted` element, where Slack applies no formatting at all. Nothing in the text (backticks,
 * `*bold*`, `<!channel>`, links) can end the box or be rendered as markup.
 */
export function preformatted(blockId: string, text: string): KnownBlock {
  return {
    type: 'rich_text',
    block_id: blockId,
    elements: [
      { type: 'rich_text_preformatted', elements: [{ type: 'text', text: text === '' ? ' ' : text }] },
    ],
  };
}

/**
 * Text for inside an inline code span (`` `…` ``) of mrkdwn: every backtick replaced by a look-alike (U+02CB),
 * so no run of backticks can close the span and let the rest be rendered as formatting.
 */
function withoutBackticks(text: string): string {
  return text.replace(/`/g, '\u02cb');
}

/** `people` from a comma-separated list of user IDs, as mentions. */
export function mentions(ids: string | null): string {
  return (ids ?? '')
    .split(',')
    .filter(Boolean)
    .map((id) => `<@${id}>`)
    .join(', ');
}

/**
 * One request in one line of mrkdwn: tool, short arguments, requester, state and id; `extra` (mrkdwn, such as
 * the risk and the preview) goes between the tool and the rest.
 */
export function approvalLine(approval: ApprovalRecord, extra?: string): string {
  const args = escapedWithin(withoutBackticks(redactedArguments(approval.arguments)), 100, '…');
  const state =
    approval.status === 'pending'
      ? `waiting since ${slackDate(approval.createdAt)}`
      : `${OUTCOME[approval.status]}${approval.decidedBy ? ` by ${mentions(approval.decidedBy)}` : ''}${
          approval.decidedAt ? ` ${slackDate(approval.decidedAt)}` : ''
        }${approval.status === 'executing' ? ' · running' : approval.status === 'executed' ? ' · ran' : ''}${breakGlassNote(approval)}`;
  return `${STATUS_EMOJI[approval.status]} \`${callChain(approval)}\` \`${args}\`${extra ? `\n${extra}` : ''}\nRequested by <@${approval.requesterId}> · ${state} · \`${approval.id}\``;
}

/** "break glass by <@A>", and whether another admin acknowledged it: for one-line lists (App Home, `/approvals`). */
export function breakGlassNote(approval: ApprovalRecord): string {
  const mark = approval.breakGlass;
  if (!mark) return '';
  const review = mark.acknowledgedBy ? `acknowledged by <@${mark.acknowledgedBy}>` : 'not yet acknowledged';
  return ` · :rotating_light: break glass by <@${mark.by}> (${review})`;
}

export function approvalSection(approval: ApprovalRecord, blockPrefix: string, extra?: string): KnownBlock {
  return {
    type: 'section',
    block_id: `${blockPrefix}-${approval.id}`,
    text: { type: 'mrkdwn', text: approvalLine(approval, extra) },
  };
}

export function context(blockId: string, text: string): KnownBlock {
  return { type: 'context', block_id: blockId, elements: [{ type: 'mrkdwn', text }] };
}

export function header(blockId: string, text: string): KnownBlock {
  return {
    type: 'header',
    block_id: blockId,
    text: { type: 'plain_text', text: truncateVisibly(text, 150, '…') },
  };
}
