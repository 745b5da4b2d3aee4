import type { types } from '@slack/bolt';
import type { ApprovalRecord } from '../../approvals/approval.js';
import { encodeApprovalButtonValue } from '../button-value.js';
import { ACTION_IDS } from '../ids.js';
import { shownArguments } from './approval-card.js';
import { context, preformatted } from './approval-lines.js';

/** Characters in one preformatted block of the modal. */
const CHUNK_CHARS = 2900;
/** Blocks of arguments on one page: about 23,000 characters, far inside a modal's 100 blocks and 250 kB. */
const CHUNKS_PER_PAGE = 8;
const PAGE_CHARS = CHUNK_CHARS * CHUNKS_PER_PAGE;

/** What the "View all arguments" modal shows: the arguments (as edited, when they were) with secrets masked. */
function argumentsToShow(approval: ApprovalRecord): { text: string; edited: boolean } {
  const edited = approval.editedArguments !== null;
  return { text: shownArguments(approval.editedArguments ?? approval.arguments), edited };
}

/** The number of pages the arguments take. */
function argumentPages(text: string): number {
  return Math.max(1, Math.ceil(text.length / PAGE_CHARS));
}

/** "3:apr_…": a page button's value. */
function encodePageValue(approvalId: string, page: number): string {
  return `${page}:${encodeApprovalButtonValue(approvalId)}`;
}

export function decodePageValue(value: unknown): { page: number; approvalId: string } | undefined {
  const match = typeof value === 'string' ? /^([1-9]\d{0,5}):(apr_[A-Za-z0-9]{16,40})$/.exec(value) : null;
  return match?.[1] && match[2] ? { page: Number(match[1]), approvalId: match[2] } : undefined;
}

/**
 * "View all arguments": every character of a request's arguments, in preformatted blocks (shown literally),
 * a page at a time with Previous/Next buttons. Secrets are masked as on the card and in the audit log. Pure.
 */
export function buildArgumentsModal(
  approval: ApprovalRecord,
  page: number,
  /** Signed note of where the modal was opened from, handed back with each page click. */
  privateMetadata?: string,
): types.ModalView {
  const { text, edited } = argumentsToShow(approval);
  const pages = argumentPages(text);
  const current = Math.min(Math.max(1, page), pages);
  const start = (current - 1) * PAGE_CHARS;
  const slice = text.slice(start, start + PAGE_CHARS);
  const blocks: types.KnownBlock[] = [
    context(
      'about',
      `\`${approval.toolName}\` · ${edited ? 'edited arguments' : 'arguments'} · ${text.length} characters · page ${current} of ${pages} · secrets are masked`,
    ),
  ];
  for (let i = 0; i < slice.length; i += CHUNK_CHARS)
    blocks.push(preformatted(`chunk-${current}-${i / CHUNK_CHARS}`, slice.slice(i, i + CHUNK_CHARS)));
  const buttons: types.Button[] = [];
  const pageButton = (label: string, to: number): types.Button => ({
    type: 'button',
    action_id: ACTION_IDS.argumentsPage,
    text: { type: 'plain_text', text: label },
    value: encodePageValue(approval.id, to),
  });
  if (current > 1) buttons.push(pageButton('Previous page', current - 1));
  if (current < pages) buttons.push(pageButton('Next page', current + 1));
  if (buttons.length > 0) blocks.push({ type: 'actions', block_id: `pages-${current}`, elements: buttons });
  return {
    type: 'modal',
    title: { type: 'plain_text', text: 'All arguments' },
    close: { type: 'plain_text', text: 'Close' },
    ...(privateMetadata ? { private_metadata: privateMetadata } : {}),
    blocks,
  };
}
