import type { ApprovalRecord } from '../approvals/approval.js';
import type { ApprovalPolicy } from '../approvals/policy.js';
import type { GrantorCheck, StandingApprovalStore } from '../approvals/ports.js';
import { AppError } from '../errors.js';
import type { IdGenerator } from '../ids.js';
import { closeAgentCall } from './agent-calls.js';
import {
  agentChain,
  countFrameTurn,
  frameHistory,
  recordAtTop,
  topFrame,
  topPausedTurn,
  withTopPausedTurn,
} from './agent-frames.js';
import { AgentCatalog, unavailableOnResume } from './agent-tools.js';
import { type CallingAgent, CallPlanner } from './call-planner.js';
import type { CallReviewer } from './call-reviewer.js';
import type { ConversationContext } from './conversation-context.js';
import type { HistoryItem, StoredItem, ToolCall } from './history.js';
import { type ChatModel, ModelError } from './model.js';
import { type ModelTurn, takeModelTurn } from './model-turn.js';
import { leaseOf, RunHandedOver, type RunnerStore, type RunRecord } from './ports.js';
import { RunEnding, type RunEndingDeps } from './run-ending.js';
import { runEvent } from './run-events.js';
import {
  NO_HOOKS,
  namedForChain,
  type RunHooks,
  type RunObserver,
  settledAgentProgress,
} from './run-observer.js';
import type { RunOutcome } from './run-outcome.js';
import { parseRunState, type RunState } from './run-state.js';
import type { ToolRegistry } from './tool-registry.js';
import { turnNotes } from './turn-notes.js';
import { TurnSettler } from './turn-settler.js';

export type { RunObserver } from './run-observer.js';
export type { RunOutcome } from './run-outcome.js';

export interface RunnerLimits {
  /** Model calls per run, across every pause and resume. */
  maxTurns: number;
  /** Times one run may pause for approvals. */
  maxApprovalRounds: number;
}

export const DEFAULT_LIMITS: RunnerLimits = { maxTurns: 10, maxApprovalRounds: 5 };

export interface RunnerDeps extends RunEndingDeps {
  model: ChatModel;
  tools: ToolRegistry;
  policy: ApprovalPolicy;
  store: RunnerStore;
  /** "Approve for this thread" grants, consulted for calls that need approval. */
  standing: Pick<StandingApprovalStore, 'find'>;
  /** Re-checks a grantor's rights when their grant is used (the approval service). */
  grantors?: GrantorCheck;
  newId: IdGenerator;
  limits?: RunnerLimits;
  /** Characters of a tool's output the model reads (`TOOL_OUTPUT_MAX_CHARS`); the rest is cut. */
  toolOutputMaxChars: number;
  /** Writes a note on each request before its card is posted (`APPROVAL_REVIEW`); none without it. */
  reviewer?: CallReviewer;
  /** Fits each request to the model's context, summarising older history; the whole history goes without it. */
  context?: ConversationContext;
  /** The agents of the agents file, called as tools (their tools are in `tools`); none without it. */
  agents?: AgentCatalog;
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
  readonly #settler: TurnSettler;
  readonly #planner: CallPlanner;
  readonly #ending: RunEnding;
  readonly #agents: AgentCatalog;

  constructor(deps: RunnerDeps) {
    this.#deps = deps;
    this.#agents = deps.agents ?? new AgentCatalog();
    this.#limits = deps.limits ?? DEFAULT_LIMITS;
    this.#settler = new TurnSettler(deps);
    this.#planner = new CallPlanner(deps);
    this.#ending = new RunEnding(deps);
  }

  /**
   * Drives the run. `signal` aborts the model request in flight when someone asks to stop the run; whether or
   * not it fires, a stop request recorded in the store is honoured before every model call and every tool call.
   */
  async advance(runId: string, observer: RunObserver = {}, signal?: AbortSignal): Promise<RunOutcome> {
    const run = await this.#deps.store.getRun(runId);
    if (!run) throw new AppError('run.not_found', `Run ${runId} not found`);
    this.#observers.set(runId, observer);
    try {
      return await this.#advance(run, { notify: observer.notify ?? NO_HOOKS.notify }, signal);
    } catch (error) {
      return await this.#ending.afterError(run, error);
    } finally {
      this.#observers.delete(runId);
    }
  }

  async #advance(run: RunRecord, hooks: RunHooks, signal: AbortSignal | undefined): Promise<RunOutcome> {
    // Only a running run this process holds is driven: a paused one waits for a decision, an ended one is done,
    // and one another process claimed (this one stalled past its lease) is that process's to drive.
    if (run.status === 'paused') return { kind: 'waiting' };
    if (run.status !== 'running' || run.leaseToken === null) return { kind: 'handed_over' };
    // Stopped while it waited (or before this process took it up): it ends here, nothing executes.
    await this.#ending.checkStop(run);
    const parsed = parseRunState(run.state);
    if (!parsed.ok)
      return this.#ending.end(run, 'cancelled', `I cannot resume this run: ${parsed.reason}`, parsed.reason);
    const state = parsed.state;
    const reason = unavailableOnResume(state, this.#deps.tools, this.#agents);
    if (reason) {
      return this.#ending.end(
        run,
        'cancelled',
        `I cannot resume this run: ${reason} Nothing was executed.`,
        reason,
      );
    }
    return this.#loop(run, state, hooks, signal);
  }

  async #loop(
    run: RunRecord,
    initial: RunState,
    hooks: RunHooks,
    signal: AbortSignal | undefined,
  ): Promise<RunOutcome> {
    let state = initial;
    for (;;) {
      // The agent at work has calls waiting (a resume, or a nested agent's answer came back): settle them.
      if (topPausedTurn(state)) {
        const settled = await this.#settleStoredTurn(run, state);
        if (!settled) return { kind: 'waiting' };
        state = settled;
        continue;
      }
      if (state.turn >= this.#limits.maxTurns) {
        return this.#ending.stopAtLimit(run, `${this.#limits.maxTurns} model calls`);
      }
      const frame = topFrame(state);
      const agent = frame && this.#agents.get(frame.agent);
      if (frame && agent?.maxTurns !== undefined && frame.turns >= agent.maxTurns) {
        const output = `The agent ${frame.agent} stopped at its limit of ${agent.maxTurns} model calls without an answer.`;
        state = await this.#closeAgent(run, state, output, 'error');
        continue;
      }
      // A stop asked for while a tool ran: its output is kept, but the model is not called again.
      await this.#ending.checkStop(run);
      // A nested agent reads its own conversation, with its own instructions, model and tools; its text is
      // never streamed to the thread.
      const history = frame ? frameHistory(frame) : await this.#deps.store.loadHistory(run.conversationId);
      const caller = agent
        ? {
            model: this.#agents.modelOf(agent, this.#deps.model),
            tools: this.#agents.toolsOf(agent, this.#deps.tools),
          }
        : this.#deps;
      const streaming = frame ? undefined : this.#observers.get(run.id);
      let taken: ModelTurn;
      try {
        taken = await takeModelTurn(caller, run, state, history, streaming, signal, frame !== undefined);
      } catch (error) {
        // Abandoned because this process is shutting down: another one takes the run up from here.
        if (signal?.reason instanceof RunHandedOver) throw signal.reason;
        // The request was abandoned because someone stopped the run.
        if (signal?.aborted) await this.#ending.checkStop(run);
        if (!(error instanceof ModelError)) throw error;
        return this.#ending.modelFailed(run, error);
      }
      const { response, items, calls } = taken;
      // Stopped while the model answered: its answer and calls are dropped, nothing runs.
      if (response.toolCalls.length > 0) await this.#ending.checkStop(run);
      state = frame ? countFrameTurn(taken.state) : taken.state;
      const answer = response.text?.trim() ? response.text : 'Done.';
      if (response.toolCalls.length === 0) {
        if (!frame) return this.#ending.complete(run, state, items, answer);
        state = await this.#closeAgent(run, state, answer, 'ok');
        continue;
      }
      const chain = agentChain(state);
      const next = await this.#runCalls(run, state, calls, items, hooks, {
        history,
        signal,
        caller: { tools: caller.tools, chain },
      });
      if ('kind' in next) return next;
      state = next;
    }
  }

  /** The nested agent at work is done: its answer (or why it has none) goes to the agent that called it. */
  async #closeAgent(run: RunRecord, state: RunState, output: string, status: 'ok' | 'error') {
    const closed = await closeAgentCall(this.#deps, run, state, output, status);
    settledAgentProgress(this.#observers.get(run.id), state, output, status);
    return closed;
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
    calls: ToolCall[],
    items: HistoryItem[],
    hooks: RunHooks,
    context: { history: readonly StoredItem[]; signal: AbortSignal | undefined; caller: CallingAgent },
  ): Promise<RunOutcome | RunState> {
    const plan = await this.#planner.plan(run, calls, items, context.caller);
    // Outside any transaction: the turn is saved once the notes are written (or their reviews given up).
    await this.#deps.reviewer?.reviewPlan(run, plan, { history: context.history, items }, context.signal);
    const { approvals, audit, notes, done } = plan;
    const pending = approvals.filter((approval) => !approval.automatic);
    const rounds = state.approvalRounds + (pending.length > 0 ? 1 : 0);
    if (rounds > this.#limits.maxApprovalRounds) {
      return this.#ending.stopAtLimit(run, `${this.#limits.maxApprovalRounds} approval rounds`);
    }
    // A nested agent's turn is kept in its frame; the bot's own goes to the thread's history.
    const recorded = recordAtTop({ ...state, approvalRounds: rounds }, items, state.turn);
    // The state keeps what deciding needs; server fields live in the history only.
    const saved = withTopPausedTurn(recorded.state, {
      turn: state.turn,
      calls: calls.map(({ callId, name, arguments: args }) => ({
        callId,
        name,
        arguments: args,
        done: done.has(callId),
      })),
    });
    // Saved as still running: the calls that need nobody run first, and no decision can claim the run meanwhile.
    const created = await this.#deps.store.saveTurn(leaseOf(run), {
      state: saved,
      status: 'running',
      items: recorded.forHistory,
      approvals,
      audit,
    });
    for (const note of turnNotes(notes, created)) await hooks.notify(note);
    const settled = await this.#settleStoredTurn(run, saved, created);
    if (settled) return settled;
    return { kind: 'paused', approvals: created.filter((approval) => approval.status === 'pending') };
  }

  /**
   * Settles what can be settled of the stored turn (free calls, decided ones), then pauses the run if a call
   * still waits for a person: returns the state to go on with, or undefined when the run is now paused. The
   * pause is one compare-and-set with the check for waiting calls, so a decision taken meanwhile (while the
   * run was still `running` and nobody could claim it) is settled here instead of being lost.
   */
  async #settleStoredTurn(
    run: RunRecord,
    state: RunState,
    given?: ApprovalRecord[],
  ): Promise<RunState | undefined> {
    const observer = namedForChain(this.#observers.get(run.id), agentChain(state));
    const turn = topPausedTurn(state)?.turn ?? state.turn;
    const approvals = given ?? (await this.#deps.store.approvalsForTurn(run.id, turn));
    let current = await this.#settler.settle(run, state, approvals, observer);
    // Every call has its output, or a call of an agent opened its frame: the run goes on.
    if (!topPausedTurn(current)) return current;
    const waiting = approvals
      .filter((approval) => approval.status === 'pending')
      .map((approval) => approval.id);
    if (
      await this.#deps.store.pauseIfPending(leaseOf(run), turn, [
        runEvent(this.#deps.clock, run, 'run.paused', { turn, pending: waiting }),
      ])
    ) {
      return undefined;
    }
    // Every waiting call was decided meanwhile (from App Home, say).
    current = await this.#settler.settle(
      run,
      current,
      await this.#deps.store.approvalsForTurn(run.id, turn),
      observer,
    );
    return topPausedTurn(current) ? undefined : current;
  }
}
