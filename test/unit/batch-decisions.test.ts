import { describe, expect, it } from 'vitest';
import type { ApprovalRecord } from '../../src/approvals/approval.js';
import type { DecisionRequest, DecisionResult } from '../../src/approvals/approval-service.js';
import { builtInPolicy } from '../../src/approvals/policy.js';
import { decideBatch, MAX_BATCH } from '../../src/conversations/batch-decisions.js';
import type { Settlement } from '../../src/conversations/decision-follow-up.js';
import { silentLogger } from '../../src/logger.js';
import {
  batchSummary,
  decodeBatchMetadata,
  encodeBatchMetadata,
  selectedApprovals,
} from '../../src/slack/batch-selection.js';
import { buildHomeView } from '../../src/slack/blocks/home-view.js';
import { ACTION_IDS } from '../../src/slack/ids.js';

const id = (n: number) => `apr_${String(n).padStart(24, '0')}`;

function approval(n: number, status: ApprovalRecord['status'] = 'pending'): ApprovalRecord {
  return {
    id: id(n),
    runId: `run_${n}`,
    conversationId: 'cnv_1',
    teamId: 'T1',
    turn: 1,
    callId: `call_${n}`,
    toolName: 'delete_note',
    arguments: '{"id":7}',
    editedArguments: null,
    originApprovalId: null,
    status,
    requesterId: 'UREQ',
    rule: builtInPolicy().forTool('delete_note').rule,
    decidedBy: status === 'pending' ? null : 'UOTHER',
    decidedAt: status === 'pending' ? null : 1,
    reason: null,
    channelId: 'C1',
    threadTs: '1.000001',
    messageTs: '1.000002',
    result: null,
    expiresAt: null,
    createdAt: 1,
  };
}

/** An approval service answering each id as scripted, recording what it was asked. */
function scripted(answers: Record<string, DecisionResult | Error>) {
  const asked: DecisionRequest[] = [];
  const settled: Settlement[] = [];
  const deps = {
    approvals: {
      decide: async (request: DecisionRequest): Promise<DecisionResult> => {
        asked.push(request);
        const answer = answers[request.approvalId] ?? { ok: false, kind: 'not_found' };
        if (answer instanceof Error) throw answer;
        return answer;
      },
    },
    work: { settled: (s: Settlement) => void settled.push(s) },
    logger: silentLogger,
  };
  return { deps, asked, settled };
}

const batch = { userId: 'UADMIN', teamId: 'T1', reason: 'no' } as const;

describe('decideBatch', () => {
  it('decides each request on its own, follows up each decision, and says which were skipped and why', async () => {
    const { deps, asked, settled } = scripted({
      [id(1)]: { ok: true, kind: 'decided', approval: approval(1, 'rejected'), runClaimed: true },
      [id(2)]: { ok: false, kind: 'not_allowed', message: 'You cannot decide this request.' },
      [id(3)]: { ok: false, kind: 'already_decided', approval: approval(3, 'approved') },
      [id(4)]: new Error('database gone'),
      [id(5)]: { ok: true, kind: 'counted', approval: approval(5), approvers: ['UADMIN'] },
    });
    const ids = [1, 2, 3, 4, 5, 6, 1].map(id);
    const outcome = await decideBatch(deps, { ...batch, approvalIds: ids, vote: 'reject' });
    // Duplicates once; every request asked with the same person, no channel, the one reason, marked batch.
    expect(asked.map((r) => r.approvalId)).toEqual([1, 2, 3, 4, 5, 6].map(id));
    for (const request of asked)
      expect(request).toMatchObject({
        userId: 'UADMIN',
        teamId: 'T1',
        channelId: undefined,
        vote: 'reject',
        reason: 'no',
        batch: true,
      });
    expect(outcome.decided.map((a) => a.id)).toEqual([id(1)]);
    expect(outcome.counted.map((a) => a.id)).toEqual([id(5)]);
    expect(outcome.skipped.map((s) => [s.approvalId, s.kind])).toEqual([
      [id(2), 'not_allowed'],
      [id(3), 'already_decided'],
      [id(4), 'failed'],
      [id(6), 'not_found'],
    ]);
    expect(settled.map((s) => [s.kind, s.approval.id])).toEqual([
      ['decided', id(1)],
      ['counted', id(5)],
    ]);
  });

  it('an approval carries no reason; a selection past the limit is decided up to it and the rest skipped', async () => {
    const { deps, asked } = scripted({});
    const ids = Array.from({ length: MAX_BATCH + 2 }, (_, i) => id(i));
    const outcome = await decideBatch(deps, { ...batch, approvalIds: ids, vote: 'approve', surface: 'web' });
    expect(asked).toHaveLength(MAX_BATCH);
    expect(asked[0]).toMatchObject({ reason: null, surface: 'web' });
    expect(outcome.skipped.filter((s) => s.kind === 'too_many').map((s) => s.approvalId)).toEqual(
      ids.slice(MAX_BATCH),
    );
  });
});

describe('batch decisions in Slack', () => {
  it('reads the ticked requests from a Home view state, ignoring values that are not approval ids', () => {
    const tick = (...values: string[]) => ({
      [ACTION_IDS.select]: { type: 'checkboxes', selected_options: values.map((value) => ({ value })) },
    });
    const state = {
      values: {
        a: tick(id(1)),
        b: tick(),
        c: tick('apr_x<@U1>', id(2), id(1)),
        d: { other: { type: 'button' } },
      },
    };
    expect(selectedApprovals(state)).toEqual([id(1), id(2)]);
    expect(selectedApprovals(undefined)).toEqual([]);
    expect(selectedApprovals({ values: 'x' })).toEqual([]);
  });

  it('the reject form carries the selection, and nothing else passes for one', () => {
    expect(decodeBatchMetadata(encodeBatchMetadata([id(1), id(2)]))).toEqual([id(1), id(2)]);
    expect(encodeBatchMetadata(Array.from({ length: 50 }, (_, i) => id(i))).length).toBeLessThan(3000);
    for (const forged of ['', '{', '{"ids":[]}', '{"ids":["nope"]}', JSON.stringify({ ids: [id(1), 7] })])
      expect(decodeBatchMetadata(forged)).toBeUndefined();
  });

  it('the summary says what was decided and each skipped request with its reason', () => {
    const text = batchSummary(
      {
        decided: [approval(1, 'approved'), approval(2, 'approved')],
        counted: [],
        skipped: [
          { approvalId: id(3), kind: 'not_allowed', message: 'You cannot decide this request.' },
          { approvalId: id(4), kind: 'already_decided', approval: approval(4, 'rejected') },
        ],
      },
      'approve',
    );
    expect(text).toBe(
      [
        'Approved 2 requests.',
        'Skipped 2:',
        `• ${id(3)}: You cannot decide this request.`,
        `• \`delete_note\` (${id(4)}): This request was already rejected by <@UOTHER> <!date^0^{date_short_pretty} at {time}|1970-01-01T00:00:00.001Z>.`,
      ].join('\n'),
    );
  });

  it('Home offers checkboxes only on requests the person may decide, and only when two or more can be', () => {
    const pending = [approval(1), approval(2), approval(3)];
    const view = (decidable: string[]) =>
      JSON.stringify(
        buildHomeView({
          kind: 'admin',
          pending,
          pendingTotal: 3,
          decisions: [],
          decidable: new Set(decidable),
        }),
      );
    const many = view([id(1), id(3)]);
    expect(many.match(/"action_id":"approval:select"/g)).toHaveLength(2);
    expect(many).not.toContain(`"value":"${id(2)}"`);
    expect(many).toContain(ACTION_IDS.batchApprove);
    const one = view([id(1)]);
    expect(one).not.toContain(ACTION_IDS.select);
    expect(one).not.toContain(ACTION_IDS.batchApprove);
  });
});
