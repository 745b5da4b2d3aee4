import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseReviewAnswer } from '../../src/approvals/approval-review.js';
import { reviewerMayApprove } from '../../src/approvals/deciders.js';
import { parsePolicyText } from '../../src/approvals/policy-file.js';
import { formatReviewUsage, reviewUsage } from '../../src/audit/usage.js';
import { reviewNoteBlocks } from '../../src/slack/blocks/review-note.js';
import { toolNames } from '../../src/tools/built-in-tools.js';

describe('parseReviewAnswer', () => {
  it('reads the JSON asked for, bare, fenced, after words or a reasoning block', () => {
    const clean = { summary: 'Deletes note 12', flags: [], structured: true };
    expect(parseReviewAnswer('{"summary": "Deletes note 12", "flags": []}')).toEqual(clean);
    expect(parseReviewAnswer('```json\n{"summary": "Deletes note 12", "flags": []}\n```')).toEqual(clean);
    expect(
      parseReviewAnswer('Here it is: {"summary": "Deletes note 12", "flags": []} hope it helps'),
    ).toEqual(clean);
    expect(
      parseReviewAnswer('<think>{"flags": ["x"]}</think>{"summary": "Deletes note 12", "flags": []}'),
    ).toEqual(clean);
  });

  it('keeps flags that are strings, one line each, and reads one string as one flag', () => {
    expect(parseReviewAnswer('{"summary": "s", "flags": ["a\\nb", 3, "", "none"]}')).toEqual({
      summary: 's',
      flags: ['a b'],
      structured: true,
    });
    expect(parseReviewAnswer('{"summary": "s", "flags": "external recipient"}')?.flags).toEqual([
      'external recipient',
    ]);
  });

  it('an answer that is not the JSON asked for is kept as text, unstructured; an empty one is no review', () => {
    expect(parseReviewAnswer('Looks fine to me.')).toEqual({
      summary: 'Looks fine to me.',
      flags: [],
      structured: false,
    });
    expect(parseReviewAnswer('{"summary": "no flags field"}')?.structured).toBe(false);
    expect(parseReviewAnswer('  ')).toBeUndefined();
    expect(parseReviewAnswer('x'.repeat(1000))?.summary.length).toBe(300);
  });
});

describe('reviewerMayApprove', () => {
  const clean = { summary: 's', flags: [], structured: true };
  const rule = { autoApprove: 'review' as const, quorum: 1 };
  it('only with autoApprove "review", one approval needed, and a structured note with no flag', () => {
    expect(reviewerMayApprove(rule, clean)).toBe(true);
    expect(reviewerMayApprove({ quorum: 1 }, clean)).toBe(false);
    expect(reviewerMayApprove({ ...rule, quorum: 2 }, clean)).toBe(false);
    expect(reviewerMayApprove(rule, { ...clean, flags: ['mass deletion'] })).toBe(false);
    expect(reviewerMayApprove(rule, { ...clean, structured: false })).toBe(false);
    expect(reviewerMayApprove(rule, undefined)).toBe(false);
  });
});

describe('reviewNoteBlocks', () => {
  it('labels the note as the model’s and escapes what it wrote', () => {
    const [block] = reviewNoteBlocks(
      { summary: 'Posts <!channel>', flags: ['<http://x|y>'], structured: true },
      'r',
    );
    const text = JSON.stringify(block);
    expect(text).toContain(':robot_face: *Reviewer (model):* Posts &lt;!channel&gt;');
    expect(text).toContain(':warning: *Flag:* &lt;http://x|y&gt;');
    expect(reviewNoteBlocks(undefined, 'r')).toEqual([]);
  });
});

describe('reviewUsage', () => {
  it('adds up the tokens of reviews, apart from runs; skipped reviews count with none', () => {
    const usage = reviewUsage([
      JSON.stringify({ summary: 's', usage: { promptTokens: 100, completionTokens: 20 } }),
      JSON.stringify({ skipped: 'timeout' }),
      'not json',
    ]);
    expect(usage).toEqual({ reviews: 3, promptTokens: 100, completionTokens: 20 });
    expect(formatReviewUsage(usage)).toContain('3 reviews, prompt 100, completion 20, total 120');
  });
});

describe('autoApprove in the policy file', () => {
  const known = toolNames();
  it('the example of docs/policy.md (Reviewer) is valid and sets it; defaults pass it on, null turns it off', () => {
    const page = readFileSync(new URL('../../docs/policy.md', import.meta.url), 'utf8');
    const example = /```json\n([\s\S]*?)```/.exec(page.slice(page.indexOf('## Reviewer')))?.[1] ?? '';
    const result = parsePolicyText(example, 'p.json', known);
    if (!result.ok) throw new Error(result.problems.join('\n'));
    expect(result.policy.forTool('create_note').rule.autoApprove).toBe('review');
    expect(result.policy.forTool('delete_note').rule.autoApprove).toBeUndefined();
    const layered = parsePolicyText(
      JSON.stringify({ defaults: { autoApprove: 'review' }, tools: { create_note: { autoApprove: null } } }),
      'p.json',
      known,
    );
    if (!layered.ok) throw new Error(layered.problems.join('\n'));
    expect(layered.policy.forTool('delete_note').rule.autoApprove).toBe('review');
    expect(layered.policy.forTool('create_note').rule.autoApprove).toBeUndefined();
  });

  it('anything but "review" or null is a problem', () => {
    const result = parsePolicyText(
      JSON.stringify({ tools: { create_note: { autoApprove: 'yes' } } }),
      'p.json',
      known,
    );
    expect(result.ok).toBe(false);
  });
});
