import { afterEach, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import { waitUntil } from '../support/wait.js';
import type { Harness } from './harness.js';
import { blocksText, query, startPolicyHarness } from './policy-support.js';

/** The example: the sandbox channel needs nobody, a long announcement needs two people. */
const POLICY = {
  tools: {
    post_message: {
      approvers: ['admins', 'U0REVIEW'],
      rules: [
        { when: "args.channel == 'C0SANDBOX'", requireApproval: false },
        { when: 'size(args.text) > 1000', quorum: 2 },
      ],
    },
  },
};

describe('approval policy: conditional rules', () => {
  let h: Harness;
  afterEach(async () => {
    await h?.close();
  });

  const posted = (harness: Harness, channel: string) =>
    harness.slack.callsTo('chat.postMessage').filter((c) => c.params.channel === channel);

  async function storedRule(harness: Harness): Promise<Record<string, unknown>> {
    const [row] = await query(harness.database, 'SELECT rule FROM approvals');
    return JSON.parse(String(row?.rule));
  }

  it('a matching rule that waives approval lets the call run without a card', async () => {
    h = await startPolicyHarness(POLICY);
    h.model.enqueue(
      reply.toolCalls([{ name: 'post_message', arguments: { channel: 'C0SANDBOX', text: 'test' } }]),
      reply.text('Posted.'),
    );
    await h.mention('post to the sandbox', { user: 'U1' });
    await h.waitForText((t) => t === 'Posted.');
    expect(h.cards()).toHaveLength(0);
    expect(posted(h, 'C0SANDBOX').map((c) => c.params.text)).toEqual(['test']);
    expect(await query(h.database, 'SELECT id FROM approvals')).toEqual([]);
  });

  it('a matching rule is laid over the tool: two approvals, the card names the rule, the rule is stored', async () => {
    h = await startPolicyHarness(POLICY);
    const text = 'x'.repeat(1001);
    h.model.enqueue(
      reply.toolCalls([{ name: 'post_message', arguments: { channel: 'C0NEWS', text } }]),
      reply.text('Announced.'),
    );
    await h.mention('announce it', { user: 'U1' });
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    expect(blocksText(card)).toContain('2 approvals needed');
    expect(blocksText(card)).toContain('Rule: `tools.post_message.rules[1]` (`size(args.text) &gt; 1000`)');
    expect(await storedRule(h)).toMatchObject({
      quorum: 2,
      appliedRule: { place: 'tools.post_message.rules[1]', when: 'size(args.text) > 1000' },
    });
    const [requested] = await query(
      h.database,
      "SELECT payload FROM audit_events WHERE kind = 'approval.requested'",
    );
    expect(JSON.parse(String(requested?.payload)).rule.appliedRule.place).toBe('tools.post_message.rules[1]');
    await h.click(card, 'approve', 'UADMIN');
    await waitUntil(async () => (await query(h.database, 'SELECT vote FROM approval_votes')).length === 1);
    expect(posted(h, 'C0NEWS')).toHaveLength(0);
    await h.click(card, 'approve', 'U0REVIEW');
    await h.waitForText((t) => t === 'Announced.');
    expect(posted(h, 'C0NEWS').map((c) => c.params.text)).toEqual([text]);
  });

  it('no rule matching: the tool’s own fields, and the card names no rule', async () => {
    h = await startPolicyHarness(POLICY);
    h.model.enqueue(
      reply.toolCalls([{ name: 'post_message', arguments: { channel: 'C0NEWS', text: 'short' } }]),
      reply.text('Done.'),
    );
    await h.mention('post it', { user: 'U1' });
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    expect(blocksText(card)).not.toContain('Rule:');
    expect(blocksText(card)).not.toContain('approvals needed');
    expect(await storedRule(h)).not.toHaveProperty('appliedRule');
    await h.click(card, 'approve', 'U0REVIEW');
    await h.waitForText((t) => t === 'Done.');
  });

  it('a rule that cannot be evaluated fails closed: approval is required and the card says which rule', async () => {
    h = await startPolicyHarness(POLICY);
    // No channel: the first rule (which would waive approval) cannot be evaluated.
    h.model.enqueue(
      reply.toolCalls([{ name: 'post_message', arguments: { text: 'where?' } }]),
      reply.text('Stopped.'),
    );
    await h.mention('post without a channel', { user: 'U1' });
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    expect(blocksText(card)).toContain(
      "Rule: `tools.post_message.rules[0]` (`args.channel == 'C0SANDBOX'`) could not be evaluated (No such key: channel), so approval is required",
    );
    expect(await storedRule(h)).toMatchObject({
      appliedRule: { place: 'tools.post_message.rules[0]', error: 'No such key: channel' },
    });
    // Approved, the call still cannot run without a channel: the model is told so.
    await h.click(card, 'approve', 'UADMIN');
    await h.waitForText((t) => t === 'Stopped.');
    expect(posted(h, 'C0SANDBOX')).toHaveLength(0);
  });
});
