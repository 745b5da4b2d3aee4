import { auditEvent } from '../audit/audit-event.js';
import type { Clock } from '../clock.js';
import {
  type ApprovalRecord,
  agentFields,
  approvalScope,
  type ClickedCard,
  cardFallback,
} from './approval.js';
import { diffArguments, readable } from './argument-diff.js';
import { breakGlassEvent, breakGlassRefusal, checkJustification } from './break-glass.js';
import { type Deciders, workspaceOf } from './deciders.js';
import { refusal, unavailableOption } from './decision-refusals.js';
import type { Delegation } from './delegation.js';
import type { ApprovalStore, Vote } from './ports.js';
import { refusedEvent, unknownRequestEvent } from './refusal-events.js';
import { RefusalLimiter } from './refusal-limiter.js';
import { type OrganisationDirectory, reaches } from './workspace-reach.js';

export interface DecisionRequest {
  approvalId: string;
  /** From the verified Slack request, never from the button value. */
  userId: string;
  teamId: string;
  /** The Enterprise Grid organisation the person acts from, as Slack signed it (see workspace-reach.ts). */
  enterpriseId?: string | undefined;
  /** The channel the click came from. */
  channelId: string | undefined;
  /** The card clicked: updated, should the decider's process die, when the card's place was never stored. */
  clicked?: ClickedCard | undefined;
  vote: Vote;
  reason: string | null;
  /** "Approve for this thread": later calls of the same tool in the conversation are approved automatically. */
  standing?: boolean;
  /** Arguments a person edited before approving, already validated against the tool's schema. */
  editedArguments?: string | null;
  /** Where the person decided, when not in Slack (recorded with the decision). */
  surface?: 'web' | 'terminal';
  /** Decided with others in one selection (App Home, the console): still its own check and audit event. */
  batch?: boolean;
  /**
   * Break glass: an admin approves what the rule would refuse them, with a justification another admin reviews
   * (see break-glass.ts). Always a plain approval by this one person, whatever the quorum.
   */
  breakGlass?: { justification: string };
}

export type DecisionResult =
  | { ok: true; kind: 'decided'; approval: ApprovalRecord; runClaimed: boolean }
  | { ok: true; kind: 'counted'; approval: ApprovalRecord; approvers: string[] }
  | { ok: false; kind: 'not_found' }
  | { ok: false; kind: 'already_decided' | 'already_voted'; approval: ApprovalRecord }
  /** `quiet`: this person was refused too often lately; nothing was recorded and nothing should be said. */
  | { ok: false; kind: 'not_allowed'; message: string; quiet?: boolean };

type Refusal = Extract<DecisionResult, { ok: false }>;

/** Whether a person may decide a request now (nothing decided). */
export type CheckResult = { ok: true; approval: ApprovalRecord } | Refusal;

/**
 * What a form is about to offer before anything is decided: approving with arguments a person will edit
 * (a rule may allow approving only as asked), or plainly.
 */
export type CheckRequest = Omit<DecisionRequest, 'reason' | 'editedArguments'> & { edit?: boolean };

export interface ApprovalServiceDeps {
  store: ApprovalStore;
  clock: Clock;
  /** Who may decide what: the one place the rules are read. */
  deciders: Deciders;
  /** Limits refusals per person (each one is an audit row and a reply). */
  refusals?: RefusalLimiter;
  /** Which workspaces belong to an organisation (installs into several workspaces); else as Slack named it. */
  organisations?: OrganisationDirectory | undefined;
}

/**
 * Applies a person's decision to an approval: checks them against the rule stored with the request, then
 * records the vote with a compare-and-set, so that exactly one of any number of racing clicks decides.
 */
export class ApprovalService {
  readonly #deps: ApprovalServiceDeps;
  readonly #refusals: RefusalLimiter;

  constructor(deps: ApprovalServiceDeps) {
    this.#deps = deps;
    this.#refusals = deps.refusals ?? new RefusalLimiter();
  }

  /**
   * Whether `userId` may decide `approval` from `channelId`, with the sentence that says why not; records
   * nothing. For a surface that asks a person only about requests they may decide (the terminal chat).
   */
  async mayDecide(
    approval: ApprovalRecord,
    userId: string,
    channelId: string | undefined,
  ): Promise<{ ok: true } | { ok: false; message: string }> {
    const { permission } = await this.#deps.deciders.right(approval, userId, channelId);
    return permission.ok ? permission : { ok: false, message: refusal(approval, permission) };
  }

  /**
   * Whether this person may decide the request now, checked as a decision is (a refusal is recorded the same
   * way), without deciding: what a form showing the request's arguments is opened behind.
   */
  async check(request: CheckRequest): Promise<CheckResult> {
    const { edit, ...rest } = request;
    const checked = await this.#checked({ ...rest, reason: null }, edit ?? false);
    return checked.ok === false ? checked : { ok: true, approval: checked.approval };
  }

  async decide(request: DecisionRequest): Promise<DecisionResult> {
    const why = request.breakGlass && checkJustification(request.breakGlass.justification);
    if (why && !why.ok) return { ok: false, kind: 'not_allowed', message: why.message };
    const checked = await this.#checked(request, Boolean(request.editedArguments));
    if (checked.ok === false) return checked;
    const { approval, delegation, overrides } = checked;
    const glass = overrides && why ? { overrides, justification: why.text } : undefined;
    const { store, clock } = this.#deps;
    const scope = approvalScope(approval);
    // An edit is its own kind of decision: approval with arguments a person rewrote.
    const kind =
      request.vote === 'reject'
        ? 'approval.rejected'
        : request.editedArguments
          ? 'approval.edited'
          : 'approval.approved';
    const result = await store.vote({
      approvalId: approval.id,
      userId: request.userId,
      vote: request.vote,
      reason: request.reason,
      standing: request.standing ?? false,
      editedArguments: request.editedArguments ?? null,
      cardFallback: cardFallback(approval, request.clicked) ?? null,
      audit: [
        auditEvent(kind, {
          at: clock.now(),
          actor: request.userId,
          ...scope,
          payload: {
            tool: approval.toolName,
            callId: approval.callId,
            ...agentFields(approval.agentChain),
            rule: approval.rule,
            ...(request.reason ? { reason: request.reason } : {}),
            ...(request.standing ? { standing: true } : {}),
            ...(request.surface ? { surface: request.surface } : {}),
            ...(request.batch ? { batch: true } : {}),
            ...(request.editedArguments
              ? {
                  editedArguments: readable(request.editedArguments),
                  changes: diffArguments(approval.arguments, request.editedArguments),
                }
              : {}),
            ...(approval.rule.risk ? { risk: approval.rule.risk } : {}),
            ...(delegation ? { onBehalfOf: delegation.delegatorId } : {}),
            ...(glass ? { breakGlass: true } : {}),
            // Enterprise Grid: decided from another workspace of the organisation (a shared channel).
            ...(request.teamId !== approval.teamId ? { fromTeam: request.teamId } : {}),
          },
        }),
        ...(glass ? [breakGlassEvent(approval, request.userId, glass, clock.now())] : []),
        ...(delegation
          ? [
              auditEvent('delegation.used', {
                at: clock.now(),
                actor: request.userId,
                ...scope,
                payload: {
                  delegationId: delegation.id,
                  delegator: delegation.delegatorId,
                  delegate: delegation.delegateId,
                  vote: request.vote,
                },
              }),
            ]
          : []),
      ],
      onBehalfOf: delegation?.delegatorId ?? null,
      breakGlass: glass ? { justification: glass.justification } : null,
    });
    switch (result.kind) {
      case 'decided':
        return { ok: true, kind: 'decided', approval: result.approval, runClaimed: result.runClaimed };
      case 'counted':
        return { ok: true, kind: 'counted', approval: result.approval, approvers: result.approvers };
      case 'already_decided':
      case 'already_voted':
        return { ok: false, kind: result.kind, approval: result.approval };
    }
  }

  /** The request, when everything but the vote itself allows this person's decision; else why not. */
  async #checked(
    request: Omit<DecisionRequest, 'editedArguments'>,
    edit: boolean,
  ): Promise<
    | Refusal
    | {
        ok: undefined;
        approval: ApprovalRecord;
        delegation?: Delegation;
        overrides?: 'self_approval' | 'not_an_approver';
      }
  > {
    const { store, clock, deciders } = this.#deps;
    const approval = await store.get(request.approvalId);
    // An approval of another workspace (outside the organisation) is as unknown as a forged id: reveal nothing.
    if (!approval || !(await reaches(approval, request, this.#deps.organisations)))
      return this.#unknown(request);
    if (approval.status !== 'pending') return { ok: false, kind: 'already_decided', approval };
    // Past its deadline the request is expired, even before the scheduler's next check records it.
    if (approval.expiresAt !== null && approval.expiresAt <= clock.now())
      return { ok: false, kind: 'already_decided', approval: { ...approval, status: 'expired' } };
    if (request.breakGlass) return this.#breakGlassChecked(approval, request);
    const { permission, delegation } = await deciders.right(approval, request.userId, request.channelId);
    const unavailable = unavailableOption(approval, request, edit);
    if (permission.ok && unavailable) return { ok: false, kind: 'not_allowed', message: unavailable };
    // A grant is re-checked against the rule before any escalation each time it would cover a call: one from
    // someone the escalation alone allows would be recorded and shown, then never cover anything.
    if (
      permission.ok &&
      request.standing &&
      request.vote === 'approve' &&
      !(await deciders.mayStillGrant(
        approval.rule,
        approval.requesterId,
        request.userId,
        workspaceOf(approval),
      ))
    )
      return {
        ok: false,
        kind: 'not_allowed',
        message: `You may decide this request only because it was escalated, so you cannot approve ${approval.toolName} for the whole thread; approve this call on its own.`,
      };
    if (!permission.ok)
      return this.#refused(approval, request, permission.reason, refusal(approval, permission));
    return { ok: undefined, approval, ...(delegation ? { delegation } : {}) };
  }

  /**
   * A break-glass approval's check: an admin the rule refuses, approving this one call on a request whose rule
   * allows it. A non-admin is refused with the same sentence as for Approve; every refusal is recorded.
   */
  async #breakGlassChecked(approval: ApprovalRecord, request: Omit<DecisionRequest, 'editedArguments'>) {
    const glass = await this.#deps.deciders.breakGlass(approval, request.userId);
    if (glass.ok && request.vote === 'approve' && !request.standing)
      return { ok: undefined, approval, overrides: glass.overrides } as const;
    if (glass.ok)
      return this.#refused(approval, request, 'break_glass', breakGlassRefusal('not_plain', approval));
    switch (glass.reason) {
      case 'not_needed':
        return {
          ok: false,
          kind: 'not_allowed',
          message: breakGlassRefusal('not_needed', approval),
        } as const;
      case 'forbidden':
        return this.#refused(
          approval,
          request,
          'break_glass_forbidden',
          breakGlassRefusal('forbidden', approval),
        );
      case 'not_an_admin':
        return this.#refused(approval, request, glass.refused.reason, refusal(approval, glass.refused));
    }
  }

  /** An unknown request, or one of a workspace the person cannot reach: one answer, recorded (see refusal-events.ts). */
  async #unknown(
    request: Pick<DecisionRequest, 'approvalId' | 'userId' | 'teamId' | 'vote'>,
  ): Promise<Refusal> {
    const { store, clock } = this.#deps;
    if (this.#refusals.allow(request.userId, clock.now()))
      await store.recordAudit([unknownRequestEvent(request, clock.now())]);
    return { ok: false, kind: 'not_found' };
  }

  /** A refusal, recorded (at most so many a person, see RefusalLimiter) as `approval.refused`. */
  async #refused(
    approval: ApprovalRecord,
    request: Pick<DecisionRequest, 'userId' | 'vote' | 'breakGlass'>,
    reason: string,
    message: string,
  ): Promise<Refusal> {
    const { store, clock } = this.#deps;
    if (!this.#refusals.allow(request.userId, clock.now()))
      return { ok: false, kind: 'not_allowed', message: 'Too many refused clicks.', quiet: true };
    await store.recordAudit([refusedEvent(approval, request, reason, clock.now())]);
    return { ok: false, kind: 'not_allowed', message };
  }
}
