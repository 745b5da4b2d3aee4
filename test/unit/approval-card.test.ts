import { describe, expect, it } from 'vitest';
import type { ApprovalRecord } from '../../src/approvals/approval.js';
import { builtInPolicy } from '../../src/approvals/policy.js';
import { buildApprovalCard } from '../../src/slack/blocks/approval-card.js';
import { decodeApprovalButtonValue } from '../../src/slack/button-value.js';

function approval(overrides: Partial<ApprovalRecord> = {}): ApprovalRecord {
  return {
    id: 'apr_0123456789abcdef01234567',
    runId: 'run_1',
    conversationId: 'conv_1',
    teamId: 'T1',
    turn: 1,
    callId: 'call_1',
    toolName: 'create_note',
    arguments: '{"text":"hello"}',
    editedArguments: null,
    originApprovalId: null,
    status: 'pending',
    requesterId: 'U1',
    rule: builtInPolicy().forTool('create_note').rule,
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

const text = (card: ReturnType<typeof buildApprovalCard>) => JSON.stringify(card.blocks);

describe('buildApprovalCard', () => {
  it('a pending card names the tool, shows the arguments and who asked, and carries its four buttons', () => {
    const card = buildApprovalCard(approval());
    expect(card.text).toContain('create_note');
    expect(text(card)).toContain('\\"text\\": \\"hello\\"');
    expect(text(card)).toContain('Requested by <@U1>');
    const actions = card.blocks.find((block) => block.type === 'actions');
    expect(
      actions && 'elements' in actions ? actions.elements.map((e) => ('text' in e ? e.text : undefined)) : [],
    ).toEqual([
      { type: 'plain_text', text: 'Approve' },
      { type: 'plain_text', text: 'Approve for this thread' },
      { type: 'plain_text', text: 'Edit' },
      { type: 'plain_text', text: 'Reject' },
    ]);
    const values =
      actions && 'elements' in actions ? actions.elements.map((e) => ('value' in e ? e.value : '')) : [];
    expect(values.map((v) => decodeApprovalButtonValue(v))).toEqual(
      Array(4).fill({ ok: true, approvalId: approval().id }),
    );
  });

  it('offers no "Approve for this thread" where the rule forbids standing approvals (delete_note)', () => {
    const card = buildApprovalCard(
      approval({ toolName: 'delete_note', rule: builtInPolicy().forTool('delete_note').rule }),
    );
    expect(text(card)).not.toContain('approval:approve_thread');
    expect(text(card)).toContain('approval:edit');
    expect(text(card)).toContain('approval:reject');
  });

  it('a decided card has no buttons and says who decided and when', () => {
    const card = buildApprovalCard(
      approval({ status: 'approved', decidedBy: 'U2', decidedAt: 1_700_000_000_000 }),
    );
    expect(card.blocks.some((block) => block.type === 'actions')).toBe(false);
    expect(text(card)).toContain('Approved by <@U2>');
    expect(text(card)).toContain('<!date^1700000000^');
    const rejected = buildApprovalCard(
      approval({ status: 'rejected', decidedBy: 'U3', decidedAt: 1, reason: 'no <!channel>' }),
    );
    expect(text(rejected)).toContain('Rejected by <@U3>');
    expect(text(rejected)).toContain('&lt;!channel&gt;');
  });

  it('long arguments are truncated visibly and stay within the section limit; markup is escaped', () => {
    const long = JSON.stringify({ text: `<!here> ${'x'.repeat(10_000)}` });
    const card = buildApprovalCard(approval({ arguments: long }));
    for (const block of card.blocks) {
      if (block.type === 'section' && block.text) expect(block.text.text.length).toBeLessThanOrEqual(3000);
    }
    expect(text(card)).toContain('truncated');
    // Shown literally in a preformatted rich_text block, never in mrkdwn where Slack would act on it.
    const preformatted = card.blocks.filter((block) => block.type === 'rich_text');
    expect(JSON.stringify(preformatted)).toContain('<!here>');
    const rest = card.blocks.filter((block) => block.type !== 'rich_text');
    expect(JSON.stringify(rest)).not.toContain('<!here>');
  });

  it('arguments full of characters that escaping lengthens still fit every section and context element', () => {
    const heavy = JSON.stringify({ text: '<b>x</b> & '.repeat(400) });
    const cards = [
      buildApprovalCard(approval({ arguments: heavy })),
      buildApprovalCard(
        approval({
          arguments: heavy,
          status: 'approved',
          decidedBy: 'U2',
          decidedAt: 1,
          editedArguments: heavy,
        }),
      ),
    ];
    for (const card of cards) {
      for (const block of card.blocks) {
        if (block.type === 'section' && block.text) expect(block.text.text.length).toBeLessThanOrEqual(3000);
        if (block.type === 'context') {
          for (const element of block.elements)
            if ('text' in element) expect(element.text.length).toBeLessThanOrEqual(3000);
        }
      }
    }
  });

  it('block ids change with the state, as Slack wants on updates', () => {
    const ids = (card: ReturnType<typeof buildApprovalCard>) => card.blocks.map((block) => block.block_id);
    const pending = ids(buildApprovalCard(approval()));
    const decided = ids(buildApprovalCard(approval({ status: 'approved', decidedBy: 'U2', decidedAt: 1 })));
    expect(pending.filter((id) => decided.includes(id))).toEqual([]);
  });
});

describe('decodeApprovalButtonValue', () => {
  it('refuses anything that is not an approval id', () => {
    for (const value of ['', 'apr_x', '{"id":1}', 'apr_../../etc', undefined, 42, 'a'.repeat(3000)]) {
      expect(decodeApprovalButtonValue(value)).toEqual({ ok: false });
    }
  });
});
