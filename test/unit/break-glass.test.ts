import { describe, expect, it } from 'vitest';
import type { BreakGlassMark } from '../../src/approvals/approval.js';
import { checkJustification, mayAcknowledge, mayBreakGlass } from '../../src/approvals/break-glass.js';
import { tallyVotes } from '../../src/approvals/decision-rules.js';
import type { DecisionPermission } from '../../src/approvals/policy.js';

const selfRefused: DecisionPermission = { ok: false, reason: 'self_approval', approvers: 'admins' };
const notNamed: DecisionPermission = { ok: false, reason: 'not_an_approver', approvers: '<@U0BOSS>' };

describe('who may break glass', () => {
  it('an admin the rule refuses, for their own request or one whose rule does not name admins', () => {
    expect(mayBreakGlass({}, selfRefused, true)).toEqual({ ok: true, overrides: 'self_approval' });
    expect(mayBreakGlass({ breakGlass: true }, notNamed, true)).toEqual({
      ok: true,
      overrides: 'not_an_approver',
    });
  });

  it('nobody who may decide as usual: break glass is never needed then', () => {
    expect(mayBreakGlass({}, { ok: true }, true)).toEqual({ ok: false, reason: 'not_needed' });
    expect(mayBreakGlass({}, { ok: true }, false)).toEqual({ ok: false, reason: 'not_needed' });
  });

  it('never a non-admin, who keeps the refusal the rule gives them', () => {
    expect(mayBreakGlass({}, notNamed, false)).toEqual({
      ok: false,
      reason: 'not_an_admin',
      refused: notNamed,
    });
  });

  it('never where the rule says "breakGlass": false', () => {
    expect(mayBreakGlass({ breakGlass: false }, selfRefused, true)).toEqual({
      ok: false,
      reason: 'forbidden',
    });
  });
});

describe('who may acknowledge a break-glass approval', () => {
  const mark: BreakGlassMark = { by: 'UA', justification: 'why', acknowledgedBy: null, acknowledgedAt: null };

  it('another admin, once', () => {
    expect(mayAcknowledge(mark, 'UB', true)).toEqual({ ok: true });
    expect(mayAcknowledge({ ...mark, acknowledgedBy: 'UC', acknowledgedAt: 1 }, 'UB', true)).toEqual({
      ok: false,
      reason: 'already_acknowledged',
    });
  });

  it('not the admin who broke glass, nor a non-admin, nor on a request approved as usual', () => {
    expect(mayAcknowledge(mark, 'UA', true)).toEqual({ ok: false, reason: 'own' });
    expect(mayAcknowledge(mark, 'UB', false)).toEqual({ ok: false, reason: 'not_an_admin' });
    expect(mayAcknowledge(undefined, 'UB', true)).toEqual({ ok: false, reason: 'not_break_glass' });
  });
});

describe('the justification', () => {
  it('is required, trimmed, at least 10 and at most 500 characters', () => {
    expect(checkJustification('  the database is on fire  ')).toEqual({
      ok: true,
      text: 'the database is on fire',
    });
    expect(checkJustification('   urgent  ').ok).toBe(false);
    expect(checkJustification('x'.repeat(501)).ok).toBe(false);
    expect(checkJustification('x'.repeat(500)).ok).toBe(true);
  });
});

describe('a break-glass vote', () => {
  it('settles the request as approved whatever the quorum; other votes still count as before', () => {
    const votes = [{ userId: 'UA', vote: 'approve' as const }];
    expect(tallyVotes({ quorum: 2 }, votes, true)).toMatchObject({ kind: 'decided', status: 'approved' });
    expect(tallyVotes({ quorum: 2 }, votes)).toMatchObject({ kind: 'counted' });
  });
});
