import type { types } from '@slack/bolt';
import type { ApprovalRecord } from '../../approvals/approval.js';
import { byRiskThenAge } from '../../approvals/risk.js';
import { decisionButtons, viewAllButton } from './approval-card.js';
import { judgementText } from './approval-judgement.js';
import { approvalSection, context, header } from './approval-lines.js';
import { batchBar, selectBox } from './batch-blocks.js';
import { breakGlassButton } from './break-glass.js';

type KnownBlock = types.KnownBlock;

/** Slack's limit for a Home tab. */
export const HOME_BLOCK_LIMIT = 100;
/** Decisions an admin sees under the pending requests. */
export const HOME_DECISIONS = 20;
/** Pending requests listed; the rest are counted. */
export const MAX_PENDING_SHOWN = 30;
const MAX_REQUESTS_SHOWN = 20;

export type HomeContent =
  | {
      kind: 'admin';
      pending: ApprovalRecord[];
      pendingTotal: number;
      decisions: ApprovalRecord[];
      /** The pending requests this person may decide: only those get buttons (an auditor may decide none). */
      decidable: ReadonlySet<string>;
      /** Of the others, those this admin may approve only by breaking glass: they get "Break glass…". */
      breakGlass?: ReadonlySet<string>;
    }
  | { kind: 'user'; waiting: ApprovalRecord[]; requests: ApprovalRecord[] };

export interface HomeView {
  type: 'home';
  blocks: KnownBlock[];
}

/**
 * The App Home tab, pending requests highest risk first, then oldest. Admins: pending requests, each with the card's own Approve/Reject buttons, then the latest
 * decisions. Everyone else: requests waiting for their decision (with buttons) and their own requests. Never
 * more than 100 blocks, however many requests wait; the rest is counted and points to `/approvals pending`.
 */
export function buildHomeView(content: HomeContent): HomeView {
  const blocks =
    content.kind === 'admin'
      ? [
          ...decidable(
            'Pending approvals',
            content.pending,
            content.pendingTotal,
            'All pending: `/approvals pending`',
            content.decidable,
            content.breakGlass,
          ),
          { type: 'divider' } as const,
          header('decisions-title', 'Latest decisions'),
          ...listed(content.decisions.slice(0, HOME_DECISIONS), 'decided', 'No decisions yet.'),
        ]
      : [
          ...decidable('Waiting for your decision', content.waiting, content.waiting.length, ''),
          { type: 'divider' } as const,
          header('requests-title', 'Your requests'),
          ...listed(
            content.requests.slice(0, MAX_REQUESTS_SHOWN),
            'mine',
            'You have not asked for anything that needs approval.',
          ),
        ];
  return { type: 'home', blocks: blocks.slice(0, HOME_BLOCK_LIMIT) };
}

function decidable(
  title: string,
  items: ApprovalRecord[],
  total: number,
  more: string,
  withButtons?: ReadonlySet<string>,
  breakGlass?: ReadonlySet<string>,
): KnownBlock[] {
  // Highest risk first, then oldest: what most needs a careful look comes first.
  const shown = [...items].sort(byRiskThenAge).slice(0, MAX_PENDING_SHOWN);
  const blocks: KnownBlock[] = [header('pending-title', `${title} (${total})`)];
  if (shown.length === 0) blocks.push(context('pending-empty', 'Nothing is waiting.'));
  const mayDecide = (approval: ApprovalRecord) => !withButtons || withButtons.has(approval.id);
  // Selecting takes a tick per request and one click for all: offered once two or more can be decided.
  const batch = shown.filter(mayDecide).length >= 2;
  if (batch) blocks.push(...batchBar());
  for (const approval of shown) {
    const section = approvalSection(approval, 'pending', judgementText(approval));
    if (!mayDecide(approval)) {
      blocks.push(section);
      if (breakGlass?.has(approval.id))
        blocks.push({
          type: 'actions',
          block_id: `break-glass-${approval.id}`,
          elements: [breakGlassButton(approval), viewAllButton(approval)],
        });
      continue;
    }
    blocks.push(
      batch && section.type === 'section' ? { ...section, accessory: selectBox(approval) } : section,
    );
    // Home shows a one-line summary: every argument is one click away before deciding.
    blocks.push({
      type: 'actions',
      block_id: `decide-${approval.id}`,
      elements: [...decisionButtons(approval), viewAllButton(approval)],
    });
  }
  if (total > shown.length) {
    blocks.push(context('pending-more', `${total - shown.length} more not shown.${more ? ` ${more}` : ''}`));
  }
  return blocks;
}

function listed(items: ApprovalRecord[], prefix: string, empty: string): KnownBlock[] {
  if (items.length === 0) return [context(`${prefix}-empty`, empty)];
  return items.map((approval) => approvalSection(approval, prefix));
}
