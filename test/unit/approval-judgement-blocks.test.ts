import { describe, expect, it } from 'vitest';
import type { ApprovalRecord } from '../../src/approvals/approval.js';
import { builtInPolicy } from '../../src/approvals/policy.js';
import { buildApprovalCard } from '../../src/slack/blocks/approval-card.js';
import { buildApprovalDetail } from '../../src/slack/blocks/approval-detail.js';
import { buildHomeView } from '../../src/slack/blocks/home-view.js';
import { approvalView } from '../../src/web/console-actions.js';

function approval(overrides: Partial<ApprovalRecord> = {}): ApprovalRecord {
  return {
    id: 'apr_0123456789abcdef01234567',
    runId: 'run_1',
    conversationId: 'conv_1',
    teamId: 'T1',
    turn: 1,
    callId: 'call_1',
    toolName: 'post_message',
    arguments: '{"channel":"C1","text":"hi"}',
    editedArguments: null,
    originApprovalId: null,
    status: 'pending',
    requesterId: 'U1',
    rule: builtInPolicy().forTool('post_message').rule,
    decidedBy: null,
    decidedAt: null,
    reason: null,
    channelId: 'C1',
    threadTs: '1.1',
    messageTs: null,
    result: null,
    expiresAt: null,
    createdAt: 0,
    ...overrides,
  };
}

const blockIds = (blocks: readonly { block_id?: string }[]) => blocks.map((b) => b.block_id ?? '');

describe('the card helps judge a request', () => {
  it('shows the risk label and the preview above the arguments', () => {
    const card = buildApprovalCard(
      approval({
        rule: { ...approval().rule, risk: 'critical' },
        preview: 'Posts to <#C1> as the bot:\n>hi',
      }),
    );
    const ids = blockIds(card.blocks);
    const judgement = ids.findIndex((id) => id.startsWith('judgement-'));
    expect(judgement).toBeGreaterThan(0);
    expect(judgement).toBeLessThan(ids.findIndex((id) => id.startsWith('arguments-')));
    const text = JSON.stringify(card.blocks[judgement]);
    expect(text).toContain(':red_circle: *Critical risk*');
    expect(text).toContain('Posts to <#C1> as the bot:\\n>hi');
  });

  it('a request with neither has no such block (cards of old requests look as they did)', () => {
    expect(blockIds(buildApprovalCard(approval()).blocks).some((id) => id.startsWith('judgement-'))).toBe(
      false,
    );
  });

  it('an approved edit shows what changed, field by field, redacted', () => {
    const card = buildApprovalCard(
      approval({
        status: 'approved',
        decidedBy: 'U2',
        decidedAt: 1,
        arguments: '{"channel":"C1","text":"hi","token":"abc"}',
        editedArguments: '{"channel":"C2","text":"hi","token":"xyz"}',
      }),
    );
    const changes = card.blocks.find((b) => b.block_id?.startsWith('changes-'));
    const text = JSON.stringify(changes);
    expect(text).toContain('channel: \\"C1\\" → \\"C2\\"');
    expect(text).toContain('token: \\"[redacted]\\" → \\"[redacted]\\"');
    expect(text).not.toMatch(/abc|xyz/);
    expect(text).not.toContain('text:');
  });
});

describe('App Home and /approvals show', () => {
  it('Home lists the highest risk first, then the oldest, each with its risk and preview', () => {
    const withRisk = (id: string, createdAt: number, risk?: 'low' | 'high' | 'critical') =>
      approval({
        id,
        createdAt,
        rule: { ...approval().rule, ...(risk ? { risk } : {}) },
        preview: `effect ${id}`,
      });
    const pending = [
      withRisk('old', 1),
      withRisk('low', 2, 'low'),
      withRisk('crit', 5, 'critical'),
      withRisk('high', 3, 'high'),
    ];
    const view = buildHomeView({
      kind: 'admin',
      pending,
      pendingTotal: 4,
      decisions: [],
      decidable: new Set(),
    });
    const sections = view.blocks.filter(
      (b) => b.block_id?.startsWith('pending-apr') || b.block_id?.match(/^pending-(old|low|crit|high)$/),
    );
    expect(sections.map((b) => b.block_id)).toEqual([
      'pending-crit',
      'pending-high',
      'pending-low',
      'pending-old',
    ]);
    expect(JSON.stringify(sections[0])).toContain(':red_circle: *Critical risk*\\neffect crit');
  });

  it('/approvals show gives the risk, the effect and the changes', () => {
    const shown = buildApprovalDetail({
      approval: approval({
        rule: { ...approval().rule, risk: 'high' },
        preview: 'Posts to <#C1>',
        status: 'approved',
        editedArguments: '{"channel":"C1","text":"hello"}',
      }),
      votes: [],
      events: [],
    });
    const text = JSON.stringify(shown.blocks);
    expect(text).toContain('*Risk:* :large_orange_circle: *High risk*');
    expect(text).toContain('*Effect:* Posts to <#C1>');
    expect(text).toContain('text: \\"hi\\" → \\"hello\\"');
  });

  it("the console's view carries the preview as plain text, the risk and the changes", () => {
    const view = approvalView(
      approval({
        rule: { ...approval().rule, risk: 'medium' },
        preview: 'Deletes note #1: &lt;b&gt; &amp; co',
        editedArguments: '{"channel":"C1","text":"bye"}',
      }),
    );
    expect(view.preview).toBe('Deletes note #1: <b> & co');
    expect(view.risk).toBe('medium');
    expect(view.changes).toEqual([{ path: 'text', kind: 'changed', old: 'hi', new: 'bye' }]);
  });
});
