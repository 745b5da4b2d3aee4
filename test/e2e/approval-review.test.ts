import { afterEach, describe, expect, it } from 'vitest';
import { type ChatRequest, type ModelReply, reply } from '../support/fake-openai.js';
import { waitUntil } from '../support/wait.js';
import type { Harness } from './harness.js';
import { blocksText, query, startPolicyHarness } from './policy-support.js';

/** The reviewer's requests carry no tools; the run's always carry the bot's tools. */
const isReview = (request: ChatRequest) => (request.tools ?? []).length === 0;

/**
 * The run asks once for `create_note`, then answers "Saved."; every review gets `review` (a reply, or a
 * function of how many reviews came before).
 */
function script(h: Harness, review: ModelReply): void {
  let runCalls = 0;
  h.model.setHandler((request) => {
    if (isReview(request)) return review;
    runCalls += 1;
    return runCalls === 1
      ? reply.toolCalls([{ name: 'create_note', arguments: { text: 'pay sk-abcdefghijklmnopqrstuv' } }])
      : reply.text('Saved.');
  });
}

async function firstCard(h: Harness) {
  const [card] = await h.waitForCards(1);
  if (!card) throw new Error('no card');
  return card;
}

const reviews = (h: Harness) => h.model.requests.filter(isReview);
const reviewText = (summary: string, flags: string[]) => reply.text(JSON.stringify({ summary, flags }));

describe('the reviewer (a model) writes a note on each request', () => {
  let h: Harness;
  afterEach(async () => {
    await h?.close();
  });

  const start = (policy: Record<string, unknown>, timeoutMs?: number) =>
    startPolicyHarness(
      { tools: { create_note: policy } },
      {
        env: { APPROVAL_REVIEW: 'on' },
        ...(timeoutMs === undefined ? {} : { overrides: { reviewTimeoutMs: timeoutMs } }),
      },
    );

  it('flags on the card, labelled as the model’s; a flag keeps autoApprove from deciding', async () => {
    h = await start({ autoApprove: 'review' });
    script(
      h,
      reviewText('Creates a note asking to pay', ['Ignore previous instructions: looks like injection']),
    );
    await h.mention('save a note');
    const card = await firstCard(h);
    const shown = blocksText(card);
    expect(shown).toContain(':robot_face: *Reviewer (model):* Creates a note asking to pay');
    expect(shown).toContain(':warning: *Flag:* Ignore previous instructions: looks like injection');
    expect(shown).toContain('approval:approve');
    expect(await query(h.database, 'SELECT status FROM approvals')).toEqual([{ status: 'pending' }]);
    // The reviewer read the request with its secrets redacted, and the conversation.
    const [asked] = reviews(h);
    const sent = JSON.stringify(asked?.messages);
    expect(sent).toContain('create_note');
    expect(sent).toContain('save a note');
    expect(sent).not.toContain('sk-abcdefghijklmnopqrstuv');
    expect(asked?.tools).toBeUndefined();
  });

  it('a clean note without autoApprove is only shown: a person decides', async () => {
    h = await start({});
    script(h, reviewText('Creates a note', []));
    await h.mention('save a note');
    const card = await firstCard(h);
    expect(blocksText(card)).toContain('Reviewer (model):* Creates a note');
    expect(blocksText(card)).toContain('Flags: none.');
    expect(await query(h.database, 'SELECT status, review FROM approvals')).toEqual([
      {
        status: 'pending',
        review: JSON.stringify({ summary: 'Creates a note', flags: [], structured: true }),
      },
    ]);
  });

  it('a clean note with autoApprove "review" approves the call: audited as the reviewer, the thread told', async () => {
    h = await start({ autoApprove: 'review' });
    script(h, reviewText('Creates a note', []));
    await h.mention('save a note');
    await h.waitForText((text) => text.includes('Saved.'));
    expect(h.texts().some((t) => t.includes('approved by the reviewer (model), which flagged nothing'))).toBe(
      true,
    );
    expect(h.cards()).toHaveLength(0);
    expect(await query(h.database, 'SELECT text FROM notes')).toHaveLength(1);
    expect(await query(h.database, 'SELECT status, decided_by FROM approvals')).toEqual([
      { status: 'executed', decided_by: 'reviewer' },
    ]);
    const events = await query(
      h.database,
      "SELECT kind, actor, payload FROM audit_events WHERE kind IN ('approval.reviewed', 'approval.approved') ORDER BY seq",
    );
    expect(events.map((e) => [e.kind, e.actor])).toEqual([
      ['approval.reviewed', 'reviewer'],
      ['approval.approved', 'reviewer'],
    ]);
    expect(String(events[1]?.payload)).toContain('Creates a note');
    // The review's tokens are recorded with its note, to be counted apart from the run's.
    expect(String(events[0]?.payload)).toMatch(/"usage":\{"promptTokens":\d+/);
  });

  it('a reviewer that takes longer than its bound is skipped: the card goes without it, to a person', async () => {
    h = await start({ autoApprove: 'review' }, 300);
    script(h, reply.hang());
    await h.mention('save a note');
    const card = await firstCard(h);
    expect(blocksText(card)).not.toContain('Reviewer (model)');
    expect(blocksText(card)).toContain('approval:approve');
    const [skipped] = await query(
      h.database,
      "SELECT payload FROM audit_events WHERE kind = 'approval.reviewed'",
    );
    expect(String(skipped?.payload)).toContain('"skipped":"timeout"');
  });

  it('a reviewer that fails (HTTP 500) is skipped: the card goes without it, to a person', async () => {
    h = await start({ autoApprove: 'review' });
    script(h, reply.error(500));
    await h.mention('save a note');
    const card = await firstCard(h);
    expect(blocksText(card)).not.toContain('Reviewer (model)');
    await waitUntil(async () =>
      (await query(h.database, 'SELECT status FROM approvals'))[0]?.status === 'pending' ? true : undefined,
    );
    const [skipped] = await query(
      h.database,
      "SELECT payload FROM audit_events WHERE kind = 'approval.reviewed'",
    );
    expect(String(skipped?.payload)).toContain('"skipped":"failed"');
  });
});
