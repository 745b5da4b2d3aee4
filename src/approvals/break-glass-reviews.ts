import { auditEvent } from '../audit/audit-event.js';
import type { Clock } from '../clock.js';
import { approvalScope } from './approval.js';
import { type AcknowledgeResult, acknowledgeRefusal, type BreakGlassStore } from './break-glass.js';
import type { Deciders } from './deciders.js';

export interface BreakGlassReviewsDeps {
  store: BreakGlassStore;
  clock: Clock;
  deciders: Pick<Deciders, 'mayAcknowledge'>;
}

/**
 * The review after a break-glass approval: another admin acknowledges it (`approval.break_glass_acknowledged`),
 * once, with a compare-and-set; the admin who broke glass never can.
 */
export class BreakGlassReviews {
  readonly #deps: BreakGlassReviewsDeps;

  constructor(deps: BreakGlassReviewsDeps) {
    this.#deps = deps;
  }

  async acknowledge(input: {
    approvalId: string;
    userId: string;
    teamId: string;
  }): Promise<AcknowledgeResult> {
    const { store, clock, deciders } = this.#deps;
    const approval = await store.get(input.approvalId);
    if (!approval || approval.teamId !== input.teamId || !approval.breakGlass)
      return { ok: false, kind: 'not_found' };
    const allowed = await deciders.mayAcknowledge(approval, input.userId);
    if (!allowed.ok) {
      if (allowed.reason === 'already_acknowledged')
        return { ok: false, kind: 'already_acknowledged', approval };
      return { ok: false, kind: 'not_allowed', message: acknowledgeRefusal(allowed.reason, approval) };
    }
    const at = clock.now();
    const result = await store.acknowledge({
      approvalId: approval.id,
      userId: input.userId,
      at,
      audit: [
        auditEvent('approval.break_glass_acknowledged', {
          at,
          actor: input.userId,
          ...approvalScope(approval),
          payload: { tool: approval.toolName, brokenBy: approval.breakGlass.by },
        }),
      ],
    });
    return result.kind === 'acknowledged'
      ? { ok: true, approval: result.approval }
      : { ok: false, kind: 'already_acknowledged', approval: result.approval };
  }

  /** Break-glass approvals still waiting for another admin's acknowledgement, oldest first. */
  unacknowledged(teamId?: string) {
    return this.#deps.store.unacknowledged(teamId);
  }
}
