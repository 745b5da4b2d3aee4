import { ACCEPTED_REQUEST_KEEP_MS, type RequestLedger } from '../../approvals/click-inbox.js';
import type { Clock } from '../../clock.js';
import { describeError } from '../../errors.js';
import { type ClickDeps, decideClick } from './decide-click.js';

/** Clicks taken over at a time. */
const PICKUP_BATCH = 50;

/** How often requests accepted longer ago than they are remembered are forgotten. */
const PRUNE_INTERVAL_MS = 60_000;

export interface ClickPickupDeps extends ClickDeps {
  ledger: Pick<RequestLedger, 'clickDecided' | 'takeOverdueClicks' | 'prune'>;
  clock: Clock;
}

/**
 * Decides the clicks that were acknowledged and recorded but never decided (their process died first, or the
 * decision could not be recorded), exactly as a live click is decided: the decision is a compare-and-set, so a
 * click decided twice still makes one decision. Now, then every `intervalMs`, one round at a time; also forgets
 * the accepted requests past Slack's window.
 */
export function startClickPickup(deps: ClickPickupDeps, intervalMs: number): { stop(): Promise<void> } {
  const { ledger, clock, logger } = deps;
  let round: Promise<void> | undefined;
  const pickUp = () => {
    round ??= (async () => {
      const overdue = await ledger.takeOverdueClicks(PICKUP_BATCH);
      if (overdue.length > 0) logger.warn('deciding clicks left undecided', { clicks: overdue.length });
      for (const { key, click } of overdue) await decideClick(deps, click, key, { pickedUp: true });
    })()
      .catch((error: unknown) => logger.error('picking up clicks failed', { error: describeError(error) }))
      .finally(() => {
        round = undefined;
      });
    return round;
  };
  const prune = () =>
    ledger.prune(clock.now() - ACCEPTED_REQUEST_KEEP_MS).catch((error: unknown) => {
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
