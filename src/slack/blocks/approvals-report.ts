import type { types } from '@slack/bolt';
import type { ApprovalRecord } from '../../approvals/approval.js';
import type { ApprovalStats, Page } from '../../approvals/audit-queries.js';
import { approximateDuration } from '../../approvals/wait-buckets.js';
import type { UsageTotals } from '../../audit/usage.js';
import type { SlackMessage } from './approval-card.js';
import { approvalSection, context, header } from './approval-lines.js';

type KnownBlock = types.KnownBlock;

/** Requests per page of an answer: one section each, far below the 50 blocks of a message. */
export const REPORT_PAGE_SIZE = 15;

/** Told to anyone who is not an admin, whatever they asked: nothing about requests leaks. */
export const ADMINS_ONLY_TEXT = 'Sorry, /approvals is for admins only.';

export interface Pager {
  page: number;
  /** The command that shows another page, e.g. `/approvals pending page:3`. */
  command: (page: number) => string;
}

/** A titled, paginated list of requests. */
export function buildApprovalList(title: string, found: Page<ApprovalRecord>, pager: Pager): SlackMessage {
  const first = (pager.page - 1) * REPORT_PAGE_SIZE;
  const blocks: KnownBlock[] = [header('title', title)];
  if (found.items.length === 0) {
    blocks.push(context('empty', found.total === 0 ? 'Nothing here.' : `There are only ${found.total}.`));
  }
  for (const approval of found.items) blocks.push(approvalSection(approval, 'item'));
  if (found.total > 0 && found.items.length > 0) {
    const last = first + found.items.length;
    const next = last < found.total ? ` · next: \`${pager.command(pager.page + 1)}\`` : '';
    const previous = pager.page > 1 ? ` · previous: \`${pager.command(pager.page - 1)}\`` : '';
    blocks.push(context('pages', `Showing ${first + 1}–${last} of ${found.total}${next}${previous}`));
  }
  return { text: `${title}: ${found.total}`, blocks };
}

/** `/approvals` without arguments: what waits and what was decided last. */
export function buildOverview(pending: Page<ApprovalRecord>, decided: Page<ApprovalRecord>): SlackMessage {
  const blocks: KnownBlock[] = [header('pending-title', `Pending approvals (${pending.total})`)];
  for (const approval of pending.items) blocks.push(approvalSection(approval, 'pending'));
  if (pending.total > pending.items.length) {
    blocks.push(
      context('pending-more', `${pending.total - pending.items.length} more: \`/approvals pending page:2\``),
    );
  }
  blocks.push({ type: 'divider' }, header('decided-title', 'Latest decisions'));
  if (decided.items.length === 0) blocks.push(context('decided-empty', 'No decisions yet.'));
  for (const approval of decided.items) blocks.push(approvalSection(approval, 'decided'));
  blocks.push(context('help', 'More: `/approvals help`'));
  return { text: `${pending.total} pending approvals`, blocks };
}

/** The model's tokens over the runs that ended in the window (completed, stopped or failed), in one line. */
function usageLine(usage: UsageTotals): string {
  if (usage.runs === 0) return 'Model tokens: no run finished.';
  const n = (value: number) => value.toLocaleString('en-US');
  const unrecorded = usage.unrecorded > 0 ? ` (${usage.unrecorded} without recorded usage)` : '';
  return `Model tokens: *${n(usage.totalTokens)}* (${n(usage.promptTokens)} prompt + ${n(usage.completionTokens)} completion) over ${n(usage.runs)} finished run${usage.runs === 1 ? '' : 's'}${unrecorded}; by user or tool: \`npm run audit -- usage\`.`;
}

/** Counts by tool and outcome, the median wait for a decision, and the model's tokens. */
export function buildStatsReport(stats: ApprovalStats, sinceText: string | undefined): SlackMessage {
  const title = `Approval statistics${sinceText ? ` since ${sinceText}` : ''}`;
  const byTool = new Map<string, string[]>();
  for (const { tool, status, count } of stats.counts) {
    byTool.set(tool, [...(byTool.get(tool) ?? []), `${count} ${status}`]);
  }
  const lines = [...byTool].map(([tool, parts]) => `\`${tool}\`: ${parts.join(' · ')}`);
  const median =
    stats.medianDecisionMs === null
      ? 'No request has been decided yet.'
      : `Median time to decision: *${approximateDuration(stats.medianDecisionMs)}* over ${stats.decided} decided requests.`;
  const blocks: KnownBlock[] = [header('title', title)];
  // 40 tools a section, 20 sections at most: far more tools than any install has, within every limit.
  for (let i = 0; i < Math.min(lines.length, 800); i += 40) {
    blocks.push({
      type: 'section',
      block_id: `tools-${i}`,
      text: { type: 'mrkdwn', text: lines.slice(i, i + 40).join('\n') },
    });
  }
  if (lines.length === 0) blocks.push(context('empty', 'No requests yet.'));
  blocks.push({ type: 'section', block_id: 'median', text: { type: 'mrkdwn', text: median } });
  blocks.push(context('usage', usageLine(stats.usage)));
  return { text: title, blocks };
}

const HELP_LINES = [
  '`/approvals` — pending approvals and the latest decisions',
  '`/approvals pending [page:N]` — every pending approval, oldest first',
  '`/approvals history [@user] [tool] [since:7d] [page:N]` — decided requests, latest first; `@user` matches who asked or who voted',
  '`/approvals show ID` — one request: its arguments (secrets redacted; View all arguments when long), every vote and who cast it, the result',
  '`/approvals stats [since:30d]` — requests by tool and outcome, median time to decision, model tokens',
  '`/approvals revoke ID` — withdraws the "Approve for this thread" given on that request; later calls ask again (admins only)',
  "`/approvals admins` — this workspace's admins · `/approvals admins add @ann` / `remove @ann` — changes them (admins only, when the app is installed into several workspaces)",
  '`/approvals delegate @bob until:2026-12-24` — Bob may decide what you may decide until the end of that day (anyone who may decide some tool)',
  '`/approvals delegations` — the delegations you gave or received · `/approvals undelegate @bob` — ends yours to Bob',
  'Times: `since:30m`, `12h`, `7d`, `2w` or a date such as `since:2026-05-01`.',
];

export function buildApprovalsHelp(problem?: string): SlackMessage {
  const blocks: KnownBlock[] = [];
  if (problem) blocks.push({ type: 'section', block_id: 'problem', text: { type: 'mrkdwn', text: problem } });
  blocks.push({ type: 'section', block_id: 'help', text: { type: 'mrkdwn', text: HELP_LINES.join('\n') } });
  return { text: `${problem ? `${problem} ` : ''}How to use /approvals`, blocks };
}
