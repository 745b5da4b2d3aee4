import { createHash } from 'node:crypto';
import {
  type ApprovalRecord,
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
import type { Clock, IdGenerator, NewApproval, RunRecord, RunStore } from './ports.js';
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
  /** The run ended early; `message` is one sentence for the thread. */
  | { kind: 'failed' | 'cancelled'; message: string };

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

  constructor(deps: RunnerDeps) {
    this.#deps = deps;
    this.#limits = deps.limits ?? DEFAULT_LIMITS;
  }

  async advance(runId: string): Promise<RunOutcome> {
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
      const settled = await this.#settlePausedTurn(run, state);
      if (!settled) return { kind: 'waiting' };
      state = settled;
    }
    return this.#loop(run, state);
  }

  async #loop(run: RunRecord, initial: RunState): Promise<RunOutcome> {
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
        this.#deps.store.saveTurn({
          runId: run.id,
          state,
          status: 'completed',
          items,
          approvals: [],
          audit: [this.#event(run, 'run.completed', { turns: turn, usage: state.usage })],
        });
        return { kind: 'completed', text: response.text ?? '' };
      }
      const outcome = await this.#runCalls(run, state, turn, response.toolCalls, items);
      if (outcome) return outcome;
    }
  }

  /** Executes the calls that need no approval and collects the others; pauses the run when any wait. */
  async #runCalls(
    run: RunRecord,
    state: RunState,
    turn: number,
    calls: ToolCall[],
    items: HistoryItem[],
  ): Promise<RunOutcome | undefined> {
    const context = toolContext(run);
    const pending: NewApproval[] = [];
    const audit: AuditInput[] = [];
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
      if (requirement.required) {
        const now = this.#deps.clock.now();
        const { rule } = requirement;
        pending.push({
          id: this.#deps.newId('apr'),
          callId: call.callId,
          toolName: call.name,
          arguments: call.arguments,
          argumentsHash: createHash('sha256').update(call.arguments).digest('hex'),
          rule,
          expiresAt: rule.expiresAfterMs ? now + rule.expiresAfterMs : null,
          remindAt: rule.remindAfterMs ? now + rule.remindAfterMs : null,
        });
        continue;
      }
      const output = parsed.ok ? await this.#execute(run, call, parsed.args, audit, null) : null;
      items.push(
        output
          ? toolOutput(call, output.text, output.status)
          : toolOutput(call, parsed.ok ? '' : parsed.error, 'error'),
      );
      done.add(call.callId);
    }
    if (pending.length === 0) {
      this.#deps.store.saveTurn({ runId: run.id, state, status: 'running', items, approvals: [], audit });
      return undefined;
    }
    const rounds = state.approvalRounds + 1;
    if (rounds > this.#limits.maxApprovalRounds) {
      const reason = `the run reached its limit of ${this.#limits.maxApprovalRounds} approval rounds`;
      this.#deps.store.saveTurn({ runId: run.id, state, status: 'running', items, approvals: [], audit });
      return this.#end(
        run,
        'failed',
        `I stopped because ${reason}; please ask again, more narrowly.`,
        reason,
      );
    }
    const paused: RunState = {
      ...state,
      approvalRounds: rounds,
      pausedTurn: { turn, calls: calls.map((call) => ({ ...call, done: done.has(call.callId) })) },
    };
    const now = this.#deps.clock.now();
    for (const approval of pending) {
      audit.push(
        auditEvent('approval.requested', {
          at: now,
          actor: run.requesterId,
          ...this.#scope(run),
          approvalId: approval.id,
          payload: {
            tool: approval.toolName,
            callId: approval.callId,
            arguments: readableArguments(approval.arguments),
            rule: approval.rule,
          },
        }),
      );
    }
    audit.push(this.#event(run, 'run.paused', { turn, pending: pending.map((approval) => approval.id) }));
    const created = this.#deps.store.saveTurn({
      runId: run.id,
      state: paused,
      status: 'paused',
      items,
      approvals: pending,
      audit,
    });
    return { kind: 'paused', approvals: created };
  }

  /** Applies the decisions of the paused turn; returns the advanced state, or undefined while any is pending. */
  async #settlePausedTurn(run: RunRecord, state: RunState): Promise<RunState | undefined> {
    const paused = state.pausedTurn;
    if (!paused) return state;
    const approvals = new Map(
      this.#deps.store.approvalsForTurn(run.id, paused.turn).map((a) => [a.callId, a]),
    );
    const open = paused.calls.filter((call) => !call.done);
    if (open.some((call) => approvals.get(call.callId)?.status === 'pending')) return undefined;
    let current = state;
    for (const call of open) {
      const approval = approvals.get(call.callId);
      const audit: AuditInput[] = [];
      const settled = approval
        ? await this.#settleCall(run, call, approval, audit)
        : {
            text: 'No approval was recorded for this call, so it did not run.',
            status: 'cancelled' as const,
            approvalStatus: null,
          };
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
        return { text: output.text, status: output.status, approvalStatus: 'executed' };
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
    const started = this.#deps.clock.now();
    let result: { text: string; status: 'ok' | 'error' };
    try {
      if (!tool) throw new Error(`Unknown tool ${call.name}`);
      result = { text: await tool.execute(args, toolContext(run)), status: 'ok' };
    } catch (error) {
      this.#deps.logger.error('tool failed', { runId: run.id, callId: call.callId, tool: call.name, error });
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
    this.#deps.store.finishRun({
      runId: run.id,
      status,
      error: reason,
      audit: [this.#event(run, status === 'failed' ? 'run.failed' : 'run.cancelled', { reason })],
    });
    return { kind: status, message };
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

type ToolOutputStatus = ToolOutputItem['data']['status'];

function toolOutput(call: ToolCall, output: string, status: ToolOutputStatus): ToolOutputItem {
  return { kind: 'tool_output', data: { callId: call.callId, name: call.name, output, status } };
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
