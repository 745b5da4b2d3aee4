import {
  type ApprovalRecord,
  type ApprovalStatus,
  expiryOutput,
  rejectionOutput,
} from '../approvals/approval.js';
import { limitOutput } from '../approvals/limit-outcome.js';
import { describeApprovers } from '../approvals/policy.js';
import type { AuditInput } from '../audit/audit-event.js';
import type { Clock } from '../clock.js';
import { AppError, describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import { openAgentCall } from './agent-calls.js';
import { recordAtTop, topPausedTurn, withTopPausedTurn } from './agent-frames.js';
import type { ToolCall, ToolOutputStatus } from './history.js';
import {
  type CallRecorder,
  leaseOf,
  type RunLoader,
  type RunRecord,
  RunStopped,
  type StopRequests,
} from './ports.js';
import { runEvent } from './run-events.js';
import type { RunState } from './run-state.js';
import { editedOutput, toolContext, toolOutput } from './tool-call-io.js';
import { boundToolOutput } from './tool-output-limit.js';
import type { ToolRegistry } from './tool-registry.js';

/** Where one tool call stands: waiting for a person, running, or settled with its output. */
export type ToolProgress =
  | { kind: 'waiting'; callId: string; toolName: string; approvers: string }
  | { kind: 'running'; callId: string; toolName: string }
  | {
      kind: 'settled';
      callId: string;
      toolName: string;
      status: ToolOutputStatus;
      output: string;
    };

type Observer = { onToolProgress?: (progress: ToolProgress) => void };

export interface TurnSettlerDeps {
  tools: ToolRegistry;
  store: CallRecorder & StopRequests & Pick<RunLoader, 'approvalsForTurn'>;
  clock: Clock;
  logger: Logger;
  /** Characters of a tool's output the model reads (`TOOL_OUTPUT_MAX_CHARS`); the rest is cut. */
  toolOutputMaxChars: number;
}

/**
 * Gives every call of a stored turn its output, one call at a time: runs free calls and approved ones (an
 * approved call is marked `executing` first, with a compare-and-set, so it never runs twice), and turns
 * rejections, expiries and cancellations into the text the model reads. A call found `executing` is one the
 * bot was running when it stopped: reported as unknown, never run again.
 */
export class TurnSettler {
  readonly #deps: TurnSettlerDeps;

  constructor(deps: TurnSettlerDeps) {
    this.#deps = deps;
  }

  /**
   * Settles every call of the stored turn of the agent at work that can be settled now, in order: free calls
   * run, decided ones run or get their rejection, expiry or cancellation text; calls still pending stay open.
   * Each output is stored with the advanced state in one transaction. Returns the state, without the paused
   * turn once every call has its output; a call of an agent that may run opens its frame and returns at once
   * (the rest of the turn waits for its answer).
   */
  async settle(
    run: RunRecord,
    state: RunState,
    approvals: readonly ApprovalRecord[],
    observer: Observer = {},
  ): Promise<RunState> {
    const paused = topPausedTurn(state);
    if (!paused) return state;
    const byCall = new Map(approvals.map((approval) => [approval.callId, approval]));
    let current = state;
    for (const call of paused.calls) {
      const approval = byCall.get(call.callId);
      if (call.done) continue;
      if (approval?.status === 'pending') {
        observer.onToolProgress?.({
          kind: 'waiting',
          callId: call.callId,
          toolName: call.name,
          approvers: describeApprovers(approval.rule),
        });
        continue;
      }
      // Someone stopped the run: nothing more executes (the runner ends the run and cancels what is left).
      const stoppedBy = await this.#deps.store.stopRequest(run.id);
      if (stoppedBy !== undefined) throw new RunStopped(run.id, stoppedBy);
      const opened = await openAgentCall(this.#deps, run, current, call, approval);
      if (opened) {
        observer.onToolProgress?.({ kind: 'running', callId: call.callId, toolName: call.name });
        return opened;
      }
      const audit: AuditInput[] = [];
      const settled = approval
        ? await this.#settleCall(run, call, approval, audit, observer)
        : await this.#runFreeCall(run, call, audit, observer);
      const calls = (topPausedTurn(current)?.calls ?? []).map((c) =>
        c.callId === call.callId ? { ...c, done: true } : c,
      );
      const last = calls.every((c) => c.done);
      const output = toolOutput(call, settled.text, settled.status);
      const recorded = recordAtTop(
        withTopPausedTurn(current, last ? null : { turn: paused.turn, calls }),
        [output],
        paused.turn,
      );
      current = recorded.state;
      await this.#deps.store.saveToolOutput(leaseOf(run), {
        state: current,
        item: recorded.forHistory[0] ?? null,
        approval:
          approval && settled.approvalStatus
            ? { id: approval.id, status: settled.approvalStatus, result: settled.text }
            : null,
        audit,
      });
      observer.onToolProgress?.({
        kind: 'settled',
        callId: call.callId,
        toolName: call.name,
        status: settled.status,
        // Never the arguments: an edited call's text for the model quotes them.
        output:
          approval?.editedArguments && settled.status === 'ok'
            ? 'Ran with arguments a person edited.'
            : settled.text,
      });
    }
    // A turn whose calls all had their outputs already (unknown tools, say) is finished too.
    return topPausedTurn(current)?.calls.every((call) => call.done)
      ? withTopPausedTurn(current, null)
      : current;
  }

  /** A call that needs no approval: run it (its arguments may still be invalid: the model gets the error). */
  async #runFreeCall(
    run: RunRecord,
    call: ToolCall,
    audit: AuditInput[],
    observer: Observer,
  ): Promise<{ text: string; status: ToolOutputStatus; approvalStatus: null }> {
    const parsed = this.#deps.tools.get(call.name)?.parseArguments(call.arguments);
    if (!parsed) return { text: `Unknown tool "${call.name}".`, status: 'error', approvalStatus: null };
    if (!parsed.ok) return { text: parsed.error, status: 'error', approvalStatus: null };
    const output = await this.#execute(run, call, parsed.args, audit, null, observer);
    return { ...output, approvalStatus: null };
  }

  async #settleCall(
    run: RunRecord,
    call: ToolCall,
    approval: ApprovalRecord,
    audit: AuditInput[],
    observer: Observer,
  ): Promise<{
    text: string;
    status: ToolOutputStatus;
    approvalStatus: ApprovalStatus | null;
  }> {
    switch (approval.status) {
      case 'rejected':
        return {
          text: rejectionOutput(approval.decidedBy, approval.reason),
          status: 'rejected',
          approvalStatus: null,
        };
      case 'expired':
        return {
          text: expiryOutput(approval.rule.expiresAfterMs, approval.reason),
          status: 'expired',
          approvalStatus: null,
        };
      case 'cancelled':
        if (approval.rule.limitReached)
          return {
            text: limitOutput(call.name, approval.rule.limitReached),
            status: 'cancelled',
            approvalStatus: null,
          };
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
          runEvent(
            this.#deps.clock,
            run,
            'tool.outcome_unknown',
            { tool: call.name, callId: call.callId },
            approval.id,
          ),
        );
        return { text, status: 'unknown', approvalStatus: approval.status };
      }
      case 'approved': {
        const raw = approval.editedArguments ?? approval.arguments;
        const tool = this.#deps.tools.get(call.name);
        const parsed = tool?.parseArguments(raw);
        if (!tool || !parsed?.ok) {
          // Approved, but the tool is gone or its (edited) arguments no longer parse: never run, and said so.
          const text = parsed && !parsed.ok ? parsed.error : `Unknown tool "${call.name}".`;
          audit.push(
            runEvent(
              this.#deps.clock,
              run,
              'tool.not_run',
              { tool: call.name, callId: call.callId, error: text },
              approval.id,
            ),
          );
          return { text, status: 'error', approvalStatus: 'executed' };
        }
        const claimed = await this.#deps.store.markExecuting(leaseOf(run), approval.id, [
          runEvent(
            this.#deps.clock,
            run,
            'tool.started',
            { tool: call.name, callId: call.callId },
            approval.id,
          ),
        ]);
        if (!claimed)
          return {
            text: 'This call was already being executed elsewhere.',
            status: 'unknown',
            approvalStatus: null,
          };
        const output = await this.#execute(run, call, parsed.args, audit, approval.id, observer);
        const text = approval.editedArguments ? editedOutput(approval, output.text) : output.text;
        return { text, status: output.status, approvalStatus: 'executed' };
      }
      case 'pending':
        throw new AppError('approval.still_pending', `Approval ${approval.id} is still pending`);
    }
  }

  async #execute(
    run: RunRecord,
    call: ToolCall,
    args: Record<string, unknown>,
    audit: AuditInput[],
    approvalId: string | null,
    observer: Observer,
  ): Promise<{ text: string; status: 'ok' | 'error' }> {
    const tool = this.#deps.tools.get(call.name);
    observer.onToolProgress?.({ kind: 'running', callId: call.callId, toolName: call.name });
    const started = this.#deps.clock.now();
    let result: { text: string; status: 'ok' | 'error' };
    try {
      if (!tool) throw new AppError('tool.unknown', `Unknown tool ${call.name}`);
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
    // The model reads a bounded output; the audit event keeps a cut output whole for admins (the export),
    // where retention prunes it with other content.
    const bounded = boundToolOutput(result.text, this.#deps.toolOutputMaxChars);
    const whole = bounded.cut ? { ...bounded.cut, result: result.text } : {};
    audit.push(
      runEvent(
        this.#deps.clock,
        run,
        'tool.finished',
        {
          tool: call.name,
          callId: call.callId,
          ok: result.status === 'ok',
          startedAt: started,
          durationMs: this.#deps.clock.now() - started,
          outputBytes: Buffer.byteLength(result.text),
          ...whole,
        },
        approvalId,
      ),
    );
    return { text: bounded.text, status: result.status };
  }
}
