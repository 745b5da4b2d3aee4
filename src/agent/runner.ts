import { createHash } from 'node:crypto';
import {
  type ApprovalRecord,
  type ApprovalRule,
  type ApprovalStatus,
  expiryOutput,
  rejectionOutput,
} from '../approvals/approval.js';
import { type ApprovalPolicy, approvalRequirement } from '../approvals/policy.js';
import { type AuditInput, auditEvent } from '../audit/audit-event.js';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import { type HistoryItem, historyToMessages, type ToolCall, type ToolOutputItem } from './history.js';
import { type ChatModel, ModelError } from './model.js';
import type { Clock, IdGenerator, NewApproval, RunRecord, RunStore, StandingApproval } from './ports.js';
import { parseRunState, type RunState } from './run-state.js';
import type { ToolContext } from './tool.js';
import type { ToolRegistry } from './tool-registry.js';

export interface RunnerLimits {
  /** Model calls per run, across every pause and resume. */
  maxTurns: number;
  /** Times one run may pause for approvals. */
  maxApprovalRounds: number;
}

export const DEFAULT_LIMITS: RunnerLimits = { maxTurns: 10, maxApprovalRounds: 5 };

export type RunOutcome =
  /** The run paused; these approvals are new and need cards. */
  | { kind: 'paused'; approvals: ApprovalRecord[] }
  /** The run still waits for decisions it asked for earlier. */
  | { kind: 'waiting' }
  | { kind: 'completed'; text: string }
  /**
   * The run ended early; `message` is one sentence for the thread. `cancelledApprovals` were pending or approved
   * and will now never execute: their cards need updating.
   */
  | { kind: 'failed' | 'cancelled'; message: string; cancelledApprovals: ApprovalRecord[] };

/** What the runner may say in the thread while it works (e.g. that a call was approved automatically). */
export interface RunHooks {
  notify(text: string): Promise<void>;
}

const NO_HOOKS: RunHooks = { notify: async () => undefined };

/** Hooks a caller passes to `advance` to show the run's progress while it happens (never persisted). */
export interface RunObserver {
  /** Answer text as the model streams it. */
  onTextDelta?: (text: string) => void;
  /** A tool is about to run. */
  onToolStart?: (toolName: string) => void;
  /** Something to say in the thread while the run works (e.g. that a call was approved automatically). */
  notify?: (text: string) => Promise<void>;
}

export interface RunnerDeps {
  model: ChatModel;
  tools: ToolRegistry;
  policy: ApprovalPolicy;
  store: RunStore;
  clock: Clock;
  newId: IdGenerator;
  logger: Logger;
  limits?: RunnerLimits;
}

/**
 * The agent loop. `advance` drives a run the caller has claimed (status `running`) until it pauses for
 * approvals, completes or fails. Every step is persisted before the next one starts, so a run can be resumed
 * from the database by any process after a restart; an approved call is marked `executing` before it runs
 * and never runs twice.
 */
export class Runner {
  readonly #deps: RunnerDeps;
  readonly #limits: RunnerLimits;
  readonly #observers = new Map<string, RunObserver>();

  constructor(deps: RunnerDeps) {
    this.#deps = deps;
    this.#limits = deps.limits ?? DEFAULT_LIMITS;
  }

  async advance(runId: string, observer: RunObserver = {}): Promise<RunOutcome> {
    this.#observers.set(runId, observer);
    try {
      return await this.#advance(runId, { notify: observer.notify ?? NO_HOOKS.notify });
    } finally {
      this.#observers.delete(runId);
    }
  }

  async #advance(runId: string, hooks: RunHooks): Promise<RunOutcome> {
    const run = this.#deps.store.getRun(runId);
    if (!run) throw new Error(`Run ${runId} not found`);
    const parsed = parseRunState(run.state);
    if (!parsed.ok)
      return this.#end(run, 'cancelled', `I cannot resume this run: ${parsed.reason}`, parsed.reason);
    let state = parsed.state;
    if (state.pausedTurn) {
      const missing = state.pausedTurn.calls.find((call) => !call.done && !this.#deps.tools.has(call.name));
      if (missing) {
        const reason = `The tool ${missing.name} is no longer available.`;
        return this.#end(
          run,
          'cancelled',
          `I cannot resume this run: ${reason} Nothing was executed.`,
          reason,
        );
      }
      const approvals = this.#deps.store.approvalsForTurn(run.id, state.pausedTurn.turn);
      // Only the decision that settled the last pending call claims the run; until then it keeps waiting.
      if (approvals.some((approval) => approval.status === 'pending')) return { kind: 'waiting' };
      state = await this.#settleTurn(run, state, approvals);
    }
    return this.#loop(run, state, hooks);
  }

  async #loop(run: RunRecord, initial: RunState, hooks: RunHooks): Promise<RunOutcome> {
    let state = initial;
    for (;;) {
      if (state.turn >= this.#limits.maxTurns) {
        const reason = `the run reached its limit of ${this.#limits.maxTurns} model calls`;
        return this.#end(
          run,
          'failed',
          `I stopped because ${reason}; please ask again, more narrowly.`,
          reason,
        );
      }
      const history = this.#deps.store.loadHistory(run.conversationId);
      let response: Awaited<ReturnType<ChatModel['complete']>>;
      try {
        response = await this.#deps.model.complete({
          messages: historyToMessages(history),
          tools: this.#toolSpecs(),
          ...onTextDelta(this.#observers.get(run.id)),
        });
      } catch (error) {
        if (!(error instanceof ModelError)) throw error;
        this.#deps.logger.warn('model call failed', {
          runId: run.id,
          error: describeError(error),
          cause: error.cause,
        });
        return this.#end(run, 'failed', error.userMessage, error.message);
      }
      const turn = state.turn + 1;
      state = { ...state, turn, usage: addUsage(state.usage, response.usage) };
      const items: HistoryItem[] = [];
      if (response.text || response.toolCalls.length === 0) {
        items.push({ kind: 'assistant_message', data: { text: response.text ?? '' } });
      }
      for (const call of response.toolCalls) items.push({ kind: 'tool_call', data: call });
      if (response.toolCalls.length === 0) {
        const text = response.text?.trim() ? response.text : 'Done.';
        // The answer is owed to the thread from the moment the run completes, in the same transaction.
        this.#deps.store.saveTurn({
          runId: run.id,
          state,
          status: 'completed',
          items,
          approvals: [],
          audit: [this.#event(run, 'run.completed', { turns: turn, usage: state.usage })],
          reply: text,
        });
        return { kind: 'completed', text };
      }
      const next = await this.#runCalls(run, state, turn, response.toolCalls, items, hooks);
      if ('kind' in next) return next;
      state = next;
    }
  }

  /**
   * Saves the model's turn, its tool calls and their approvals before any call runs, then runs the calls that
   * need no person (free ones, and those a standing approval covers); pauses when any call waits for a
   * decision. Because the calls are stored first, a crash never leads to a call being asked for and run anew:
   * after a restart the stored turn is settled, and an approved call found `executing` is reported as unknown.
   */
  async #runCalls(
    run: RunRecord,
    state: RunState,
    turn: number,
    calls: ToolCall[],
    items: HistoryItem[],
    hooks: RunHooks,
  ): Promise<RunOutcome | RunState> {
    const context = toolContext(run);
    const approvals: NewApproval[] = [];
    const audit: AuditInput[] = [];
    const notes: string[] = [];
    const done = new Set<string>();
    for (const call of calls) {
      const tool = this.#deps.tools.get(call.name);
      if (!tool) {
        const output = `Unknown tool "${call.name}". Available tools: ${this.#deps.tools.names().join(', ')}.`;
        items.push(toolOutput(call, output, 'error'));
        done.add(call.callId);
        continue;
      }
      const parsed = tool.parseArguments(call.arguments);
      const requirement = await approvalRequirement(this.#deps.policy, tool, parsed, context);
      if (!requirement.required) continue;
      const approval = this.#newApproval(call, requirement.rule);
      // A standing approval covers only calls whose arguments parse: a malformed call always asks a person.
      const grant =
        parsed.ok && requirement.rule.allowStandingApproval
          ? this.#deps.store.standingApproval(run.conversationId, call.name)
          : undefined;
      if (grant) {
        approvals.push({ ...approval, automatic: grant });
        audit.push(this.#automaticApproval(run, call, approval.id, grant));
        notes.push(`\`${call.name}\` auto-approved (approved for this thread by <@${grant.grantedBy}>)`);
      } else {
        approvals.push(approval);
        audit.push(this.#approvalRequested(run, approval));
      }
    }
    const pending = approvals.filter((approval) => !approval.automatic);
    const rounds = state.approvalRounds + (pending.length > 0 ? 1 : 0);
    if (rounds > this.#limits.maxApprovalRounds) {
      const reason = `the run reached its limit of ${this.#limits.maxApprovalRounds} approval rounds`;
      this.#deps.store.saveTurn({ runId: run.id, state, status: 'running', items, approvals: [], audit: [] });
      return this.#end(
        run,
        'failed',
        `I stopped because ${reason}; please ask again, more narrowly.`,
        reason,
      );
    }
    const saved: RunState = {
      ...state,
      approvalRounds: rounds,
      pausedTurn: { turn, calls: calls.map((call) => ({ ...call, done: done.has(call.callId) })) },
    };
    if (pending.length > 0) {
      audit.push(this.#event(run, 'run.paused', { turn, pending: pending.map((approval) => approval.id) }));
    }
    const created = this.#deps.store.saveTurn({
      runId: run.id,
      state: saved,
      status: pending.length > 0 ? 'paused' : 'running',
      items,
      approvals,
      audit,
    });
    for (const note of notes) await hooks.notify(note);
    const settled = await this.#settleTurn(run, saved, created);
    if (pending.length === 0) return settled;
    return { kind: 'paused', approvals: created.filter((approval) => approval.status === 'pending') };
  }

  #approvalRequested(run: RunRecord, approval: NewApproval): AuditInput {
    return auditEvent('approval.requested', {
      at: this.#deps.clock.now(),
      actor: run.requesterId,
      ...this.#scope(run),
      approvalId: approval.id,
      payload: {
        tool: approval.toolName,
        callId: approval.callId,
        arguments: readableArguments(approval.arguments),
        rule: approval.rule,
      },
    });
  }

  /** A call a standing approval covers: an automatic decision by the grantor, pointing to the original. */
  #automaticApproval(
    run: RunRecord,
    call: ToolCall,
    approvalId: string,
    grant: StandingApproval,
  ): AuditInput {
    return auditEvent('approval.approved', {
      at: this.#deps.clock.now(),
      actor: grant.grantedBy,
      ...this.#scope(run),
      approvalId,
      payload: {
        tool: call.name,
        callId: call.callId,
        arguments: readableArguments(call.arguments),
        automatic: true,
        originApprovalId: grant.originApprovalId,
      },
    });
  }

  #newApproval(call: ToolCall, rule: ApprovalRule): NewApproval {
    const now = this.#deps.clock.now();
    return {
      id: this.#deps.newId('apr'),
      callId: call.callId,
      toolName: call.name,
      arguments: call.arguments,
      argumentsHash: createHash('sha256').update(call.arguments).digest('hex'),
      rule,
      expiresAt: rule.expiresAfterMs ? now + rule.expiresAfterMs : null,
      remindAt: rule.remindAfterMs ? now + rule.remindAfterMs : null,
    };
  }

  /**
   * Settles every call of the stored turn that can be settled now, in order: free calls run, decided ones
   * run or get their rejection, expiry or cancellation text; calls still pending stay open. Each output is
   * stored with the advanced state in one transaction. Returns the state, without `pausedTurn` once every call
   * has its output.
   */
  async #settleTurn(
    run: RunRecord,
    state: RunState,
    approvals: readonly ApprovalRecord[],
  ): Promise<RunState> {
    const paused = state.pausedTurn;
    if (!paused) return state;
    const byCall = new Map(approvals.map((approval) => [approval.callId, approval]));
    let current = state;
    for (const call of paused.calls) {
      const approval = byCall.get(call.callId);
      if (call.done || approval?.status === 'pending') continue;
      const audit: AuditInput[] = [];
      const settled = approval
        ? await this.#settleCall(run, call, approval, audit)
        : await this.#runFreeCall(run, call, audit);
      const calls = (current.pausedTurn?.calls ?? []).map((c) =>
        c.callId === call.callId ? { ...c, done: true } : c,
      );
      const last = calls.every((c) => c.done);
      current = { ...current, pausedTurn: last ? null : { turn: paused.turn, calls } };
      this.#deps.store.saveToolOutput({
        runId: run.id,
        state: current,
        item: toolOutput(call, settled.text, settled.status),
        approval:
          approval && settled.approvalStatus
            ? { id: approval.id, status: settled.approvalStatus, result: settled.text }
            : null,
        audit,
      });
    }
    return current;
  }

  /** A call that needs no approval: run it (its arguments may still be invalid: the model gets the error). */
  async #runFreeCall(
    run: RunRecord,
    call: ToolCall,
    audit: AuditInput[],
  ): Promise<{ text: string; status: ToolOutputStatus; approvalStatus: null }> {
    const parsed = this.#deps.tools.get(call.name)?.parseArguments(call.arguments);
    if (!parsed) return { text: `Unknown tool "${call.name}".`, status: 'error', approvalStatus: null };
    if (!parsed.ok) return { text: parsed.error, status: 'error', approvalStatus: null };
    const output = await this.#execute(run, call, parsed.args, audit, null);
    return { ...output, approvalStatus: null };
  }

  async #settleCall(
    run: RunRecord,
    call: ToolCall,
    approval: ApprovalRecord,
    audit: AuditInput[],
  ): Promise<{ text: string; status: ToolOutputStatus; approvalStatus: ApprovalStatus | null }> {
    switch (approval.status) {
      case 'rejected':
        return {
          text: rejectionOutput(approval.decidedBy, approval.reason),
          status: 'rejected',
          approvalStatus: null,
        };
      case 'expired':
        return { text: expiryOutput(approval.rule.expiresAfterMs), status: 'expired', approvalStatus: null };
      case 'cancelled':
        return {
          text: `The approval request was cancelled: ${approval.reason ?? 'no reason given'}.`,
          status: 'cancelled',
          approvalStatus: null,
        };
      case 'executing':
      case 'executed': {
        // The process stopped while the tool ran (or before its result was stored): never run it again.
        const text =
          'The outcome of this tool call is unknown: the bot stopped while it was running. It was not retried.';
        audit.push(
          this.#event(run, 'tool.outcome_unknown', { tool: call.name, callId: call.callId }, approval.id),
        );
        return { text, status: 'unknown', approvalStatus: approval.status };
      }
      case 'approved': {
        const raw = approval.editedArguments ?? approval.arguments;
        const tool = this.#deps.tools.get(call.name);
        const parsed = tool?.parseArguments(raw);
        if (!tool || !parsed?.ok) {
          const text = parsed && !parsed.ok ? parsed.error : `Unknown tool "${call.name}".`;
          return { text, status: 'error', approvalStatus: 'executed' };
        }
        const claimed = this.#deps.store.markExecuting(approval.id, [
          this.#event(run, 'tool.started', { tool: call.name, callId: call.callId }, approval.id),
        ]);
        if (!claimed)
          return {
            text: 'This call was already being executed elsewhere.',
            status: 'unknown',
            approvalStatus: null,
          };
        const output = await this.#execute(run, call, parsed.args, audit, approval.id);
        const text = approval.editedArguments ? editedOutput(approval, output.text) : output.text;
        return { text, status: output.status, approvalStatus: 'executed' };
      }
      case 'pending':
        throw new Error(`Approval ${approval.id} is still pending`);
    }
  }

  async #execute(
    run: RunRecord,
    call: ToolCall,
    args: Record<string, unknown>,
    audit: AuditInput[],
    approvalId: string | null,
  ): Promise<{ text: string; status: 'ok' | 'error' }> {
    const tool = this.#deps.tools.get(call.name);
    this.#observers.get(run.id)?.onToolStart?.(call.name);
    const started = this.#deps.clock.now();
    let result: { text: string; status: 'ok' | 'error' };
    try {
      if (!tool) throw new Error(`Unknown tool ${call.name}`);
      result = { text: await tool.execute(args, toolContext(run)), status: 'ok' };
    } catch (error) {
      // The model gets a short sentence; the log keeps the whole error with its stack.
      this.#deps.logger.error('tool failed', {
        runId: run.id,
        callId: call.callId,
        tool: call.name,
        error: describeError(error),
        stack: error instanceof Error ? error.stack : undefined,
      });
      result = {
        text: `The tool ${call.name} failed: ${describeError(error).slice(0, 300)}`,
        status: 'error',
      };
    }
    audit.push(
      this.#event(
        run,
        'tool.finished',
        {
          tool: call.name,
          callId: call.callId,
          ok: result.status === 'ok',
          startedAt: started,
          durationMs: this.#deps.clock.now() - started,
          outputBytes: Buffer.byteLength(result.text),
        },
        approvalId,
      ),
    );
    return result;
  }

  #end(run: RunRecord, status: 'failed' | 'cancelled', message: string, reason: string): RunOutcome {
    const cancelledApprovals = this.#deps.store.finishRun({
      runId: run.id,
      status,
      error: reason,
      reply: message,
      audit: [this.#event(run, status === 'failed' ? 'run.failed' : 'run.cancelled', { reason })],
      cancelAudit: (approval) =>
        this.#event(
          run,
          'approval.cancelled',
          { tool: approval.toolName, callId: approval.callId, reason },
          approval.id,
        ),
    });
    return { kind: status, message, cancelledApprovals };
  }

  #toolSpecs() {
    return this.#deps.tools
      .list()
      .map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.jsonSchema }));
  }

  #scope(run: RunRecord) {
    return { teamId: run.teamId, conversationId: run.conversationId, runId: run.id };
  }

  #event(
    run: RunRecord,
    kind: AuditInput['kind'],
    payload: Record<string, unknown>,
    approvalId: string | null = null,
  ) {
    return auditEvent(kind, { at: this.#deps.clock.now(), ...this.#scope(run), approvalId, payload });
  }
}

function onTextDelta(observer: RunObserver | undefined) {
  return observer?.onTextDelta ? { onTextDelta: observer.onTextDelta } : {};
}

type ToolOutputStatus = ToolOutputItem['data']['status'];

function toolOutput(call: ToolCall, output: string, status: ToolOutputStatus): ToolOutputItem {
  return { kind: 'tool_output', data: { callId: call.callId, name: call.name, output, status } };
}

/** The model is told that a person changed its arguments, and to what. */
function editedOutput(approval: ApprovalRecord, output: string): string {
  const editor = approval.decidedBy ? `<@${approval.decidedBy}>` : 'A person';
  return `${editor} edited the arguments before approving. The tool ran with ${approval.editedArguments} instead of ${approval.arguments}. Output: ${output}`;
}

function toolContext(run: RunRecord): ToolContext {
  return {
    teamId: run.teamId,
    conversationId: run.conversationId,
    channelId: run.channelId,
    threadTs: run.threadTs,
    runId: run.id,
    requesterId: run.requesterId,
  };
}

function addUsage(a: RunState['usage'], b: RunState['usage']): RunState['usage'] {
  return {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    totalTokens: a.totalTokens + b.totalTokens,
  };
}

/** Arguments as an object when they parse, else the raw string: the audit log keeps exactly what was asked. */
export function readableArguments(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}
