import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { ConversationService } from './conversation-service.js';
import type { DecisionFollowUp, Settlement } from './decision-follow-up.js';
import type { CardLocation, IncomingMessage, StopRequest } from './surface-ports.js';

/**
 * Where the work after intake happens: taking a message in and driving its run, and what follows a decision
 * (cards, the resumed run, App Home). Intake answers Slack and hands it over; the work runs in this thread, or
 * in a worker thread with its own connections (see src/workers/).
 */
export interface RunWork {
  /** A message Slack delivered, with its delivery keys: taken in (deduplicated, started or queued) and driven. */
  message(message: IncomingMessage, keys: readonly string[]): void;
  settled(settlement: Settlement, where?: { fallback?: CardLocation }): void;
  /** Someone asked to stop a thread's work. */
  stopRun(stop: StopRequest): void;
}

/** The work done in this thread, in the background of the request that led to it. */
export function localWork(
  conversations: Pick<ConversationService, 'handleMessage' | 'requestStop'>,
  followUp: Pick<DecisionFollowUp, 'after'>,
  logger: Logger,
): RunWork {
  const failed = (what: string) => (error: unknown) =>
    logger.error(`${what} failed`, { error: describeError(error) });
  return {
    message: (message, keys) => void conversations.handleMessage(message, keys).catch(failed('message')),
    settled: (settlement, where) =>
      void followUp.after(settlement, where).catch(failed('decision follow-up')),
    stopRun: (stop) => void conversations.requestStop(stop).catch(failed('stop')),
  };
}
