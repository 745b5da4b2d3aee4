import { RefusalLimiter } from '../approvals/refusal-limiter.js';
import { auditEvent } from '../audit/audit-event.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { StopStore } from './store-ports.js';
import type { ChannelMembership, StopRequest } from './surface-ports.js';

/** Why a stop was not honoured. */
export type StopRefusal =
  /** A direct message (or the Messages tab) is one person's conversation: only they may stop its work. */
  | 'not_the_owner'
  /** Not the thread's starter, and not a member of the channel (or membership could not be read). */
  | 'not_in_channel';

export type StopPermission = { ok: true } | { ok: false; reason: StopRefusal };

/**
 * Slack's direct message ids start with `D`: the conversation of one person with the bot (the Messages tab
 * too). Group DMs and channels start with `C` or `G`.
 */
export function isDirectMessage(channelId: string): boolean {
  return channelId.startsWith('D');
}

/**
 * Who may stop a thread's work, as for a click: whoever started the thread's conversation, always; in a
 * direct message nobody else (a signed event naming another person is not theirs to send); elsewhere anyone
 * the surface says is a member of the channel. Without a membership port, only the starter.
 */
export async function mayStop(
  stop: StopRequest,
  starterId: string | undefined,
  members: ChannelMembership | undefined,
): Promise<StopPermission> {
  if (starterId !== undefined && stop.userId === starterId) return { ok: true };
  if (isDirectMessage(stop.channelId)) return { ok: false, reason: 'not_the_owner' };
  const member = members
    ? await members.isMember({ teamId: stop.teamId, channelId: stop.channelId, userId: stop.userId })
    : false;
  return member ? { ok: true } : { ok: false, reason: 'not_in_channel' };
}

export interface StopGateDeps {
  store: Pick<StopStore, 'starter' | 'recordAudit'>;
  members?: ChannelMembership | undefined;
  clock: Clock;
  logger: Logger;
  /** Limits refusals recorded per person (each is an audit row); default 5 a minute. */
  refusals?: RefusalLimiter;
}

/**
 * Lets through the stops `mayStop` allows. A refused stop changes nothing: it is logged and audited
 * (`run.stop_refused`, the person as actor), except past the per-person refusal limit, when it is only dropped.
 */
export class StopGate {
  readonly #deps: StopGateDeps;
  readonly #refusals: RefusalLimiter;

  constructor(deps: StopGateDeps) {
    this.#deps = deps;
    this.#refusals = deps.refusals ?? new RefusalLimiter();
  }

  /** Whether the stop may go ahead; a refusal is recorded before this resolves. */
  async admit(stop: StopRequest): Promise<boolean> {
    const { store, members, clock, logger } = this.#deps;
    const thread = { teamId: stop.teamId, channelId: stop.channelId, threadTs: stop.threadTs };
    const starter = await store.starter(thread);
    const permission = await mayStop(stop, starter?.userId, members);
    if (permission.ok) return true;
    logger.warn('stop refused', {
      channelId: stop.channelId,
      userId: stop.userId,
      reason: permission.reason,
    });
    if (!this.#refusals.allow(stop.userId, clock.now())) return false;
    await store.recordAudit([
      auditEvent('run.stop_refused', {
        at: clock.now(),
        actor: stop.userId,
        teamId: stop.teamId,
        enterpriseId: stop.enterpriseId ?? null,
        conversationId: starter?.conversationId ?? null,
        payload: { reason: permission.reason, channelId: stop.channelId, threadTs: stop.threadTs },
      }),
    ]);
    return false;
  }
}

/** A stop as recorded on a run: who asked, and when. */
export interface RecordedStop {
  by: string;
  at: number;
}

/**
 * What a stop request does to the thread's active run, inside the store's transaction that holds the run: the
 * first request is the one kept (a second stopper changes nothing); a paused run is taken over by whoever
 * received the stop, which ends it at once; a running one stays its driver's, which finds the request before
 * its next model or tool call. Pure.
 */
export function stopEffect(
  status: 'running' | 'paused',
  recorded: RecordedStop | undefined,
  request: RecordedStop,
): { kept: RecordedStop; takeOver: boolean } {
  return { kept: recorded ?? request, takeOver: status === 'paused' };
}
