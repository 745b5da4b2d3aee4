import { describe, expect, it } from 'vitest';
import type { ApprovalRecord } from '../../src/approvals/approval.js';
import { buildApprovalDetail } from '../../src/slack/blocks/approval-detail.js';
import {
  buildApprovalList,
  buildOverview,
  REPORT_PAGE_SIZE,
} from '../../src/slack/blocks/approvals-report.js';
import { buildHomeView } from '../../src/slack/blocks/home-view.js';

function approval(n: number, overrides: Partial<ApprovalRecord> = {}): ApprovalRecord {
  return {
    id: `apr_${String(n).padStart(24, '0')}`,
    runId: 'run_1',
    conversationId: 'conv_1',
    teamId: 'T1',
    turn: 1,
    callId: `call_${n}`,
    toolName: 'post_message',
    // The worst case for Slack's limits: every character grows fivefold when escaped.
    arguments: JSON.stringify({ channel: 'C1', text: '&'.repeat(10_000) }),
    editedArguments: null,
    status: 'pending',
    requesterId: 'U1',
    rule: {
      approvers: ['admins'],
      allowSelfApproval: false,
      quorum: 1,
      allowStandingApproval: false,
      expiresAfterMs: null,
      remindAfterMs: null,
      approvalChannel: null,
    },
    decidedBy: null,
    decidedAt: null,
    reason: null,
    channelId: 'C1',
    threadTs: '1.1',
    messageTs: '1.2',
    result: null,
    expiresAt: null,
    createdAt: 1_700_000_000_000,
    originApprovalId: null,
    ...overrides,
  };
}

/** All text of a list of blocks, as Slack counts it against a message's budget. */
function textLength(blocks: unknown[]): number {
  return JSON.stringify(blocks).length;
}

describe('Block Kit limits of the audit views', () => {
  it('a request with huge arguments fits every section of `show`', () => {
    const detail = buildApprovalDetail({
      approval: approval(1, {
        status: 'executed',
        decidedBy: 'U2',
        decidedAt: 1_700_000_060_000,
        result: '<'.repeat(9000),
      }),
      votes: [{ userId: 'U2', vote: 'approve', at: 1_700_000_060_000 }],
      events: [],
    });
    for (const block of detail.blocks) {
      if (block.type === 'section') expect(block.text?.text.length).toBeLessThanOrEqual(3000);
    }
    expect(JSON.stringify(detail.blocks)).toContain('truncated; ');
  });

  it('lists and the overview stay within 50 blocks and about 11k characters', () => {
    const items = Array.from({ length: REPORT_PAGE_SIZE }, (_, i) => approval(i));
    const list = buildApprovalList(
      'Pending approvals',
      { items, total: 400 },
      { page: 2, command: (n) => `/approvals pending page:${n}` },
    );
    expect(list.blocks.length).toBeLessThanOrEqual(50);
    expect(textLength(list.blocks)).toBeLessThan(11_000);
    const overview = buildOverview(
      { items: items.slice(0, 8), total: 400 },
      { items: items.slice(0, 8), total: 9 },
    );
    expect(overview.blocks.length).toBeLessThanOrEqual(50);
    expect(textLength(overview.blocks)).toBeLessThan(11_000);
  });

  it('a user’s Home stays within 100 blocks with hundreds of requests waiting for them', () => {
    const many = Array.from({ length: 300 }, (_, i) => approval(i));
    const view = buildHomeView({ kind: 'user', waiting: many, requests: many });
    expect(view.blocks.length).toBeLessThanOrEqual(100);
    expect(JSON.stringify(view.blocks)).toContain('270 more not shown');
  });
});
