import { agentFields } from '../approvals/approval.js';
import type { AuditInput } from '../audit/audit-event.js';
import type { Clock } from '../clock.js';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { HistoryItem } from './history.js';
import type { ModelError } from './model.js';
import {
  leaseOf,
  RunHandedOver,
  type RunLoader,
  type RunRecord,
  RunStopped,
  type StopRequests,
  type TurnRecorder,
} from './ports.js';
import { runEvent } from './run-events.js';
import type { RunOutcome } from './run-outcome.js';
import { parseRunState, type RunState } from './run-state.js';
import { untilStored } from './store-retry.js';

/** How long the commit that ends a run with its answer is retried while the database refuses it. */
const END_RETRY_MS = 10 * 60_000;

/** What the thread hears when the run stopped on a bug or an infrastructure failure. */
export const UNEXPECTED_FAILURE =
  'Something went wrong on my side while working on this, so I stopped; please try again.';

export interface RunEndingDeps {
  /** Reads the run's last saved usage, records its end, sees a stop request. */
  store: Pick<RunLoader, 'getRun'> & Pick<TurnRecorder, 'saveTurn' | 'finishRun'> & StopRequests;
  clock: Clock;
  logger: Logger;
  /** How long the commit that ends a run with its answer is retried while the database refuses it; 10 min. */
  endRetryMs?: number;
}

/**
 * Every way a run ends: with its answer, at a bound, stopped by someone, on a model failure or on an unexpected
 * error. Each end is one commit of the run's status, its reply to the thread and its audit event; an early end
 * also cancels whatever the run would still have executed.
 */
export class RunEnding {
  readonly #deps: RunEndingDeps;

  constructor(deps: RunEndingDeps) {
    this.#deps = deps;
  }

  /**
   * The model answered without calls: the run completes. The answer is owed to the thread from the moment the
   * run completes, in the same transaction. The model has given it (a stream shows it already): a database
   * outage delays this commit until the database is back, instead of failing the run, so the answer is never
   * asked for (and shown) a second time.
   */
  async complete(run: RunRecord, state: RunState, items: HistoryItem[], text: string): Promise<RunOutcome> {
    await untilStored(
      async () => {
        await this.checkStop(run);
        await this.#deps.store.saveTurn(leaseOf(run), {
          state,
          status: 'completed',
          items,
          approvals: [],
          audit: [this.#event(run, 'run.completed', { turns: state.turn, usage: state.usage })],
          reply: text,
        });
      },
      { logger: this.#deps.logger, runId: run.id, giveUpAfterMs: this.#deps.endRetryMs ?? END_RETRY_MS },
    );
    return { kind: 'completed', text };
  }

  /** Throws `RunStopped` when someone asked to stop the run. */
  async checkStop(run: RunRecord): Promise<void> {
    const by = await this.#deps.store.stopRequest(run.id);
    if (by !== undefined) throw new RunStopped(run.id, by);
  }

  /**
   * Where a drive that threw leaves the run: taken over (its new driver goes on), stopped on request, or, on a
   * bug or an infrastructure failure (a predicate that throws, a busy database), failed, so the conversation is
   * not left blocked behind it and whatever it would still have executed is cancelled.
   */
  async afterError(run: RunRecord, error: unknown): Promise<RunOutcome> {
    if (error instanceof RunHandedOver) {
      this.#deps.logger.warn('run taken over by another process', { runId: run.id });
      return { kind: 'handed_over' };
    }
    if (error instanceof RunStopped) return unlessHandedOver(() => this.#stopped(run, error.by));
    this.#deps.logger.error('run failed unexpectedly', { runId: run.id, error: describeError(error) });
    return unlessHandedOver(() =>
      this.end(run, 'failed', UNEXPECTED_FAILURE, `unexpected error: ${describeError(error)}`),
    );
  }

  /** The model call failed after the client's own retries: the thread is told what failed. */
  modelFailed(run: RunRecord, error: ModelError): Promise<RunOutcome> {
    this.#deps.logger.warn('model call failed', {
      runId: run.id,
      error: describeError(error),
      cause: error.cause,
    });
    return this.end(run, 'failed', error.userMessage, error.message);
  }

  /** A bound of the whole run was reached: one clear sentence in the thread. */
  stopAtLimit(run: RunRecord, limit: string): Promise<RunOutcome> {
    const reason = `the run reached its limit of ${limit}`;
    return this.end(run, 'failed', `I stopped because ${reason}; please ask again, more narrowly.`, reason);
  }

  /** Someone stopped the run: it ends `cancelled` with them as the actor, and the thread is told who. */
  async #stopped(run: RunRecord, by: string): Promise<RunOutcome> {
    this.#deps.logger.info('run stopped on request', { runId: run.id, by });
    const ended = await this.end(
      run,
      'cancelled',
      `Stopped by <@${by}>. Nothing more runs for this request; send a new message to start again.`,
      `stopped by <@${by}>`,
      by,
    );
    return ended.kind === 'cancelled' ? { ...ended, stoppedBy: by } : ended;
  }

  /** Ends the run early: `message` goes to the thread, `reason` to the run's error and the audit log. */
  async end(
    run: RunRecord,
    status: 'failed' | 'cancelled',
    message: string,
    reason: string,
    actor?: string,
  ): Promise<RunOutcome> {
    // The usage so far, as last saved (each turn saves it): a run that ends early used tokens too.
    const saved = parseRunState((await this.#deps.store.getRun(run.id))?.state ?? run.state);
    const usage = saved.ok ? { usage: saved.state.usage } : {};
    // An ended run never resumes: the conversations of the nested agents it left at work are not kept.
    const dropped =
      saved.ok && saved.state.frames.length > 0 ? { state: { ...saved.state, frames: [] } } : {};
    const cancelledApprovals = await this.#deps.store.finishRun(leaseOf(run), {
      status,
      error: reason,
      reply: message,
      ...dropped,
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
          { tool: approval.toolName, callId: approval.callId, ...agentFields(approval.agentChain), reason },
          approval.id,
          actor,
        ),
    });
    return { kind: status, message, cancelledApprovals };
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

/** The end of a run that another process took over meanwhile is that process's: nothing more to do here. */
async function unlessHandedOver(end: () => Promise<RunOutcome>): Promise<RunOutcome> {
  try {
    return await end();
  } catch (ending) {
    if (ending instanceof RunHandedOver) return { kind: 'handed_over' };
    throw ending;
  }
}
