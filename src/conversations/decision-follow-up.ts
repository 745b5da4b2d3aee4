import type { ApprovalRecord } from '../approvals/approval.js';
import { describeError } from '../errors.js';
import { type CardUpdatesDeps, updateCard } from './card-updates.js';
import type { ConversationService } from './conversation-service.js';
import type { CardLocation, CardUpdate } from './surface-ports.js';

/** What changed about a request, whoever changed it and wherever (a card, a form, App Home, the terminal, a deadline). */
export type Settlement =
  /** A vote was counted; more approvals are needed. */
  | { kind: 'counted'; approval: ApprovalRecord; approvers: string[] }
  /** A person decided; `runClaimed` when this decision settled the turn and this process now drives the run. */
  | { kind: 'decided'; approval: ApprovalRecord; runClaimed: boolean; standing?: boolean }
  /** The deadline passed; `runClaimed` as above. */
  | { kind: 'expired'; approval: ApprovalRecord; runClaimed: boolean };

/** Views of requests outside the thread (App Home), refreshed when one of them changes. Never throws. */
export interface DecisionWatchers {
  afterDecision(approval: ApprovalRecord, deciders: readonly string[]): Promise<void>;
}

export interface DecisionFollowUpDeps extends CardUpdatesDeps {
  conversations: Pick<ConversationService, 'resume'>;
}

/**
 * The one place that says what follows a change to a request: every copy of its card shows it, the run goes
 * on when this caller's change settled the paused turn, then App Home views are refreshed (after the run is
 * on its way, so they never hold the answer back).
 */
export class DecisionFollowUp {
  readonly #deps: DecisionFollowUpDeps;
  readonly #watchers: DecisionWatchers[] = [];

  constructor(deps: DecisionFollowUpDeps) {
    this.#deps = deps;
  }

  /** Adds a view to refresh after every change (the Slack bot's App Home). */
  watch(watcher: DecisionWatchers): void {
    this.#watchers.push(watcher);
  }

  /**
   * Resolves once cards and views are updated, with `run`: the resumed run's work (already logged when it
   * fails), for a caller that waits for the answer (the terminal).
   */
  async after(
    settlement: Settlement,
    where: { fallback?: CardLocation } = {},
  ): Promise<{ run: Promise<void> }> {
    const { approval } = settlement;
    await this.#updateCard(approval, {
      ...where,
      ...(settlement.kind === 'counted' ? { approvers: settlement.approvers } : {}),
      ...(settlement.kind === 'decided' && settlement.standing ? { standing: true } : {}),
    });
    const run =
      settlement.kind !== 'counted' && settlement.runClaimed ? this.#resume(approval) : Promise.resolve();
    for (const watcher of this.#watchers) await watcher.afterDecision(approval, deciders(settlement));
    return { run };
  }

  #resume(approval: ApprovalRecord): Promise<void> {
    return this.#deps.conversations.resume(approval.runId, approval).catch((error: unknown) => {
      this.#deps.logger.error('resume failed', { runId: approval.runId, error: describeError(error) });
    });
  }

  /** The change is committed: a card Slack refuses to update is owed and retried, and the run goes on. */
  #updateCard(approval: ApprovalRecord, update: CardUpdate): Promise<void> {
    return updateCard(this.#deps, approval, update);
  }
}

function deciders(settlement: Settlement): string[] {
  switch (settlement.kind) {
    case 'counted':
      return settlement.approvers;
    case 'decided':
      return (settlement.approval.decidedBy ?? '').split(',').filter(Boolean);
    case 'expired':
      return [];
  }
}
