import { auditEvent } from '../audit/audit-event.js';
import type { Clock } from '../clock.js';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { SurfaceKind } from '../surfaces.js';
import { type ApprovalRecord, agentFields, approvalScope, formatDuration } from './approval.js';
import type { ApprovalTimerStore } from './ports.js';

/** What happens outside the database when a deadline passes (card updates, resuming, thread replies). */
export interface ApprovalTimerEvents {
  /** The request expired; when `runClaimed`, this caller must resume the run. */
  expired(approval: ApprovalRecord, runClaimed: boolean): Promise<void>;
  /** A reminder is due for a request that is still pending. */
  remind(approval: ApprovalRecord): Promise<void>;
  /** The request was escalated: `escalateTo` may now decide it too and must be told. */
  escalated(approval: ApprovalRecord): Promise<void>;
}

export interface ApprovalSchedulerDeps {
  store: ApprovalTimerStore;
  /** The conversations whose deadlines this process acts on (the Slack bot's, or the terminal's). */
  surface: SurfaceKind;
  events: ApprovalTimerEvents;
  clock: Clock;
  logger: Logger;
  /** How often deadlines are checked, in real milliseconds. */
  intervalMs: number;
}

/** Default check interval: deadlines are minutes to days, so a few seconds late is fine. */
export const DEFAULT_SCHEDULER_INTERVAL_MS = 5000;

/**
 * The one place where approval deadlines are acted on: expired requests are marked `expired` and their runs
 * resumed, due reminders are sent. Every change is a compare-and-set in the store, so ticks never act twice
 * on one deadline, in this process or another. The first tick runs at `start`, which handles what expired while
 * the process was down.
 */
export class ApprovalScheduler {
  readonly #deps: ApprovalSchedulerDeps;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> = Promise.resolve();

  constructor(deps: ApprovalSchedulerDeps) {
    this.#deps = deps;
  }

  async start(): Promise<void> {
    await this.tick();
    this.#timer ??= setInterval(() => void this.tick(), this.#deps.intervalMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }

  /** One check of every deadline; ticks run one after another, never overlapping. */
  tick(): Promise<void> {
    this.#running = this.#running
      .then(() => this.#check())
      .catch((error: unknown) => {
        this.#deps.logger.error('approval deadline check failed', { error: describeError(error) });
      });
    return this.#running;
  }

  async #check(): Promise<void> {
    const { store, events, clock, logger, surface } = this.#deps;
    const now = clock.now();
    const expired = await store.expireDue(now, surface, (approval) => [
      auditEvent('approval.expired', {
        at: now,
        ...approvalScope(approval),
        payload: {
          tool: approval.toolName,
          callId: approval.callId,
          ...agentFields(approval.agentChain),
          rule: approval.rule,
        },
      }),
    ]);
    const escalations = await store.claimEscalations(now, surface, (approval) => [
      auditEvent('approval.escalated', {
        at: now,
        ...approvalScope(approval),
        payload: {
          tool: approval.toolName,
          after: formatDuration(approval.rule.escalateAfterMs ?? 0),
          escalateTo: approval.rule.escalateTo ?? [],
        },
      }),
    ]);
    const reminders = await store.claimReminders(now, surface, (approval) => [
      auditEvent('approval.reminded', {
        at: now,
        ...approvalScope(approval),
        payload: { tool: approval.toolName, after: formatDuration(approval.rule.remindAfterMs ?? 0) },
      }),
    ]);
    const work = [
      ...expired.map(
        ({ approval, runClaimed }) =>
          () =>
            events.expired(approval, runClaimed),
      ),
      ...escalations.map((approval) => () => events.escalated(approval)),
      ...reminders.map((approval) => () => events.remind(approval)),
    ];
    for (const run of work) {
      try {
        await run();
      } catch (error) {
        logger.error('approval deadline action failed', { error: describeError(error) });
      }
    }
  }
}
