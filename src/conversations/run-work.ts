import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { ConversationService, Received } from './conversation-service.js';
import type { DecisionFollowUp, Settlement } from './decision-follow-up.js';
import type { CardLocation } from './ports.js';

/**
 * Where the work after intake happens: the run a message started, and what follows a decision (cards, the
 * resumed run, App Home). Intake hands it over and answers Slack; the work runs here, in this thread, or in a
 * worker thread with its own connections (see src/workers/).
 */
export interface RunWork {
  drive(started: Extract<Received, { kind: 'started' }>): void;
  settled(settlement: Settlement, where?: { fallback?: CardLocation }): void;
}

/** The work done in this thread, in the background of the request that led to it. */
export function localWork(
  conversations: Pick<ConversationService, 'drive'>,
  followUp: Pick<DecisionFollowUp, 'after'>,
  logger: Logger,
): RunWork {
  const failed = (what: string) => (error: unknown) =>
    logger.error(`${what} failed`, { error: describeError(error) });
  return {
    drive: (started) => void conversations.drive(started).catch(failed('run')),
    settled: (settlement, where) =>
      void followUp.after(settlement, where).catch(failed('decision follow-up')),
  };
}
