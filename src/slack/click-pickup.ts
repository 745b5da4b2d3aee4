import type { WebClient } from '@slack/web-api';
import { ACCEPTED_REQUEST_KEEP_MS } from '../approvals/click-inbox.js';
import { localWork } from '../conversations/run-work.js';
import type { Core } from '../core.js';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import { decideClick } from './listeners/decision-replies.js';
import { directMessenger } from './no-previews.js';
import type { SlackAdapters } from './slack-adapters.js';

/** Clicks taken over at a time. */
const PICKUP_BATCH = 50;

/** How often requests accepted longer ago than they are remembered are forgotten. */
const PRUNE_INTERVAL_MS = 60_000;

/**
 * Decides the clicks that were acknowledged and recorded but never decided (their process died first, or the
 * decision could not be recorded), exactly as a live click is decided: the decision is a compare-and-set, so a
 * click decided twice still makes one decision. Now, then every `intervalMs`, one round at a time; also forgets
 * the accepted requests past Slack's window.
 */
export function startClickPickup(
  core: Core<SlackAdapters>,
  client: WebClient,
  logger: Logger,
  intervalMs: number,
): { stop(): Promise<void> } {
  const { stores, clock } = core;
  const decisions = {
    approvals: core.approvals,
    work: localWork(core.conversations, core.followUp, logger),
    surface: core.adapters.interactive,
    logger,
    directMessage: directMessenger(client),
    ledger: stores.requests,
  };
  let round: Promise<void> | undefined;
  const pickUp = () => {
    round ??= (async () => {
      const overdue = await stores.requests.takeOverdueClicks(PICKUP_BATCH);
      if (overdue.length > 0) logger.warn('deciding clicks left undecided', { clicks: overdue.length });
      for (const { key, click } of overdue) await decideClick(decisions, click, key);
    })()
      .catch((error: unknown) => logger.error('picking up clicks failed', { error: describeError(error) }))
      .finally(() => {
        round = undefined;
      });
    return round;
  };
  const prune = () =>
    stores.requests.prune(clock.now() - ACCEPTED_REQUEST_KEEP_MS).catch((error: unknown) => {
      logger.warn('pruning accepted requests failed', { error: describeError(error) });
    });
  void pickUp();
  const timers = [setInterval(pickUp, intervalMs), setInterval(prune, PRUNE_INTERVAL_MS)];
  for (const timer of timers) timer.unref();
  return {
    async stop() {
      for (const timer of timers) clearInterval(timer);
      await round;
    },
  };
}
