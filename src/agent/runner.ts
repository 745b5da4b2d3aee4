import type { ApprovalRecord } from '../approvals/approval.js';
import type { ApprovalPolicy } from '../approvals/policy.js';
import type { GrantorCheck, StandingApprovalStore } from '../approvals/ports.js';
import type { AuditInput } from '../audit/audit-event.js';
import type { Clock } from '../clock.js';
import { describeError } from '../errors.js';
import type { IdGenerator } from '../ids.js';
import type { Logger } from '../logger.js';
import { CallPlanner } from './call-planner.js';
import {
  callIdsOf,
  type HistoryItem,
  historyToMessages,
  type ToolCall,
  withUniqueCallIds,
} from './history.js';
import { type ChatModel, ModelError } from './model.js';
import { leaseOf, RunHandedOver, type RunnerStore, type RunRecord, RunStopped } from './ports.js';
import { modelCallScope } from './run-context.js';
import { runEvent } from './run-events.js';
import { parseRunState, type RunState } from './run-state.js';
import { untilStored } from './store-retry.js';
import type { ToolRegistry } from './tool-registry.js';
import { type ToolProgress, TurnSettler } from './turn-settler.js';

export interface RunnerLimits {
  /** Model calls per run, across every pause and resume. */
  maxTurns: number;
  /** Times one run may pause for approvals. */
  maxApprovalRounds: number;
}

export const DEFAULT_LIMITS: RunnerLimits = { maxTurns: 10, maxApprovalRounds: 5 };

/** How long the commit that ends a run with its answer is retried while the database refuses it. */
const END_RETRY_MS = 10 * 60_000;

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
  | {
      kind: 'failed' | 'cancelled';
      message: string;
      cancelledApprovals: ApprovalRecord[];
      /** Who stopped the run, when someone did (Slack's stop button). */
      stoppedBy?: string;
    }
  /**
   * Nothing more for this process to do: it stalled past its lease and another process drives the run now, or
   * the run had already ended.
   */
  | { kind: 'handed_over' };

/** What the runner may say in the thread while it works (e.g. that a call was approved automatically). */
export interface RunHooks {
  notify(text: string): Promise<void>;
}

const NO_HOOKS: RunHooks = { notify: async () => undefined };

/** What the thread hears when the run stopped on a bug or an infrastructure failure. */
export const UNEXPECTED_FAILURE =
  'Something went wrong on my side while working on this, so I stopped; please try again.';

/** Hooks a caller passes to `advance` to show the run's progress while it happens (never persisted). */
export interface RunObserver {
  /** Answer text as the model streams it. */
  onTextDelta?: (text: string) => void;
  /** The text streamed since the model call (or its retry) began was cut off: it is no answer. */
  onTextCut?: (text: string) => void;
  /** Where each tool call of the run stands, in call order (`running`: it is about to run). */
  onToolProgress?: (progress: ToolProgress) => void;
  /** Something to say in the thread while the run works (e.g. that a call was approved automatically). */
  notify?: (text: string) => Promise<void>;
}

export interface RunnerDeps {
  model: ChatModel;
  tools: ToolRegistry;
  policy: ApprovalPolicy;
  store: RunnerStore;
  /** "Approve for this thread" grants, consulted for calls that need approval. */
  standing: Pick<StandingApprovalStore, 'find'>;
  /** Re-checks a grantor's rights when their grant is used (the approval service). */
  grantors?: GrantorCheck;
  clock: Clock;
  newId: IdGenerator;
  logger: Logger;
  limits?: RunnerLimits;
  /** How long the commit that ends a run with its answer is retried while the database refuses it; 10 min. */
  endRetryMs?: number;
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

  constructor(deps: RunnerDeps) {
    this.#deps = deps;
    this.#limits = deps.limits ?? DEFAULT_LIMITS;
    this.#settler = new TurnSettler(deps);
    this.#planner = new CallPlanner(deps);
  }

  /**
   * Drives the run. `signal` aborts the model request in flight when someone asks to stop the run; whether or
   * not it fires, a stop request recorded in the store is honoured before every model call and every tool call.
   */
  async advance(runId: string, observer: RunObserver = {}, signal?: AbortSignal): Promise<RunOutcome> {
    const run = await this.#deps.store.getRun(runId);
    if (!run) throw new Error(`Run ${runId} not found`);
    this.#observers.set(runId, observer);
    try {
      return await this.#advance(run, { notify: observer.notify ?? NO_HOOKS.notify }, signal);
    } catch (error) {
      if (error instanceof RunHandedOver) {
        this.#deps.logger.warn('run taken over by another process', { runId });
        return { kind: 'handed_over' };
      }
      if (error instanceof RunStopped) {
        try {
          return await this.#stopped(run, error.by);
        } catch (ending) {
          if (ending instanceof RunHandedOver) return { kind: 'handed_over' };
          throw ending;
        }
      }
      // A bug or an infrastructure failure (a predicate that throws, a busy database): end the run, so the
      // conversation is not left blocked behind it, and cancel whatever it would still have executed.
      this.#deps.logger.error('run failed unexpectedly', { runId, error: describeError(error) });
      try {
        return await this.#end(
          run,
          'failed',
          UNEXPECTED_FAILURE,
          `unexpected error: ${describeError(error)}`,
        );
      } catch (ending) {
        if (ending instanceof RunHandedOver) return { kind: 'handed_over' };
        throw ending;
      }
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
    await this.#checkStop(run);
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
      const settled = await this.#settleStoredTurn(run, state);
      if (!settled) return { kind: 'waiting' };
      state = settled;
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
      if (state.turn >= this.#limits.maxTurns) {
        return this.#stopAtLimit(run, `${this.#limits.maxTurns} model calls`);
      }
      // A stop asked for while a tool ran: its output is kept, but the model is not called again.
      await this.#checkStop(run);
      const history = await this.#deps.store.loadHistory(run.conversationId);
      let response: Awaited<ReturnType<ChatModel['complete']>>;
      try {
        const scope = {
          runId: run.id,
          teamId: run.teamId,
          conversationId: run.conversationId,
          turn: state.turn + 1,
        };
        response = await modelCallScope.run(scope, () =>
          this.#deps.model.complete({
            messages: historyToMessages(history),
            tools: this.#toolSpecs(),
            ...streamHooks(this.#observers.get(run.id)),
            ...(signal ? { signal } : {}),
          }),
        );
      } catch (error) {
        // The request was abandoned because someone stopped the run.
        if (signal?.aborted) await this.#checkStop(run);
        if (!(error instanceof ModelError)) throw error;
        this.#deps.logger.warn('model call failed', {
          runId: run.id,
          error: describeError(error),
          cause: error.cause,
        });
        return this.#end(run, 'failed', error.userMessage, error.message);
      }
      // Stopped while the model answered: its answer and calls are dropped, nothing runs.
      if (response.toolCalls.length > 0) await this.#checkStop(run);
      const turn = state.turn + 1;
      state = { ...state, turn, usage: addUsage(state.usage, response.usage) };
      const items: HistoryItem[] = [];
      if (response.text || response.toolCalls.length === 0 || response.serverFields) {
        const text = response.text ?? '';
        const { serverFields } = response;
        items.push({ kind: 'assistant_message', data: serverFields ? { text, serverFields } : { text } });
      }
      const calls = withUniqueCallIds(response.toolCalls, callIdsOf(history), turn);
      for (const call of calls) items.push({ kind: 'tool_call', data: call });
      if (response.toolCalls.length === 0) {
        const text = response.text?.trim() ? response.text : 'Done.';
        // The answer is owed to the thread from the moment the run completes, in the same transaction. The model
        // has given it (a stream shows it already): a database outage delays this commit until the database is
        // back, instead of failing the run, so the answer is never asked for (and shown) a second time.
        await untilStored(
          async () => {
            await this.#checkStop(run);
            await this.#deps.store.saveTurn(leaseOf(run), {
              state,
              status: 'completed',
              items,
              approvals: [],
              audit: [this.#event(run, 'run.completed', { turns: turn, usage: state.usage })],
              reply: text,
            });
          },
          { logger: this.#deps.logger, runId: run.id, giveUpAfterMs: this.#deps.endRetryMs ?? END_RETRY_MS },
        );
        return { kind: 'completed', text };
      }
      const next = await this.#runCalls(run, state, turn, calls, items, hooks);
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
    const { approvals, audit, notes, done } = await this.#planner.plan(run, calls, items);
    const pending = approvals.filter((approval) => !approval.automatic);
    const rounds = state.approvalRounds + (pending.length > 0 ? 1 : 0);
    if (rounds > this.#limits.maxApprovalRounds) {
      return this.#stopAtLimit(run, `${this.#limits.maxApprovalRounds} approval rounds`);
    }
    const saved: RunState = {
      ...state,
      approvalRounds: rounds,
      // The state keeps what deciding needs; server fields live in the history only.
      pausedTurn: {
        turn,
        calls: calls.map(({ callId, name, arguments: args }) => ({
          callId,
          name,
          arguments: args,
          done: done.has(callId),
        })),
      },
    };
    // Saved as still running: the calls that need nobody run first, and no decision can claim the run meanwhile.
    const created = await this.#deps.store.saveTurn(leaseOf(run), {
      state: saved,
      status: 'running',
      items,
      approvals,
      audit,
    });
    for (const note of notes) await hooks.notify(note);
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
    const observer = this.#observers.get(run.id);
    const turn = state.pausedTurn?.turn ?? state.turn;
    const approvals = given ?? (await this.#deps.store.approvalsForTurn(run.id, turn));
    let current = await this.#settler.settle(run, state, approvals, observer);
    if (!current.pausedTurn) return current;
    const waiting = approvals
      .filter((approval) => approval.status === 'pending')
      .map((approval) => approval.id);
    if (
      await this.#deps.store.pauseIfPending(leaseOf(run), turn, [
        this.#event(run, 'run.paused', { turn, pending: waiting }),
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
    return current.pausedTurn ? undefined : current;
  }

  /** A bound of the whole run was reached: one clear sentence in the thread. */
  #stopAtLimit(run: RunRecord, limit: string): Promise<RunOutcome> {
    const reason = `the run reached its limit of ${limit}`;
    return this.#end(run, 'failed', `I stopped because ${reason}; please ask again, more narrowly.`, reason);
  }

  /** Throws `RunStopped` when someone asked to stop the run. */
  async #checkStop(run: RunRecord): Promise<void> {
    const by = await this.#deps.store.stopRequest(run.id);
    if (by !== undefined) throw new RunStopped(run.id, by);
  }

  /** Someone stopped the run: it ends `cancelled` with them as the actor, and the thread is told who. */
  async #stopped(run: RunRecord, by: string): Promise<RunOutcome> {
    this.#deps.logger.info('run stopped on request', { runId: run.id, by });
    const ended = await this.#end(
      run,
      'cancelled',
      `Stopped by <@${by}>. Nothing more runs for this request; send a new message to start again.`,
      `stopped by <@${by}>`,
      by,
    );
    return ended.kind === 'cancelled' ? { ...ended, stoppedBy: by } : ended;
  }

  async #end(
    run: RunRecord,
    status: 'failed' | 'cancelled',
    message: string,
    reason: string,
    actor?: string,
  ): Promise<RunOutcome> {
    // The usage so far, as last saved (each turn saves it): a run that ends early used tokens too.
    const saved = parseRunState((await this.#deps.store.getRun(run.id))?.state ?? run.state);
    const usage = saved.ok ? { usage: saved.state.usage } : {};
    const cancelledApprovals = await this.#deps.store.finishRun(leaseOf(run), {
      status,
      error: reason,
      reply: message,
      audit: [
        this.#event(
          run,
          status === 'failed' ? 'run.failed' : 'run.cancelled',
          { reason, ...usage },
          null,
          actor,
        ),
      ],
      cancelAudit: (approval) =>
        this.#event(
          run,
          'approval.cancelled',
          { tool: approval.toolName, callId: approval.callId, reason },
          approval.id,
          actor,
        ),
    });
    return { kind: status, message, cancelledApprovals };
  }

  #toolSpecs() {
    return this.#deps.tools
      .list()
      .map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.jsonSchema }));
  }

  #event(
    run: RunRecord,
    kind: AuditInput['kind'],
    payload: Record<string, unknown>,
    approvalId: string | null = null,
    actor?: string,
  ) {
    return runEvent(this.#deps.clock, run, kind, payload, approvalId, actor);
  }
}

function streamHooks(observer: RunObserver | undefined) {
  return {
    ...(observer?.onTextDelta ? { onTextDelta: observer.onTextDelta } : {}),
    ...(observer?.onTextCut ? { onTextCut: observer.onTextCut } : {}),
  };
}

function addUsage(a: RunState['usage'], b: RunState['usage']): RunState['usage'] {
  return {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    totalTokens: a.totalTokens + b.totalTokens,
  };
}
