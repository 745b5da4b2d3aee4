import type { BotProcess } from '../support/bot-process.js';
import { sleep } from '../support/wait.js';

/** One delivery attempt: to which slot, whether its process was stopping, and how it was answered. */
export interface Attempt {
  slot: number;
  stopping: boolean;
  outcome: number | 'refused';
}

/**
 * Bot processes behind a load balancer, as Slack reaches them during a rolling deploy: each slot's process is
 * replaced in turn, and a process that was sent SIGTERM still gets requests until it has exited (a load
 * balancer learns late that a backend went away). A request that is refused or not answered 2xx is delivered
 * again to the next slot, as Slack retries an event (same `event_id`, with its retry headers) and as a person
 * whose click failed clicks again.
 */
export interface Fleet {
  /** The process in each slot now. */
  bots: BotProcess[];
  /** Processes sent SIGTERM and not yet exited. */
  stopping: Set<BotProcess>;
  /** Every delivery attempt so far. */
  attempts: Attempt[];
  /**
   * Delivers one request: `send(url, attempt)` builds and posts attempt number `attempt` (0 first) to `url`
   * (`http://127.0.0.1:PORT`). Resolves with the slot that answered 2xx; throws after `MAX_ATTEMPTS`.
   */
  deliver(first: number, send: (url: string, attempt: number) => Promise<Response>): Promise<number>;
  /** Records an attempt made outside `deliver` (a request held open across the SIGTERM). */
  record(attempt: Attempt): void;
}

/** Slack gives up on an event after its first delivery and 3 retries; the test allows a few more. */
const MAX_ATTEMPTS = 8;

export function createFleet(bots: BotProcess[]): Fleet {
  const fleet: Fleet = {
    bots,
    stopping: new Set(),
    attempts: [],
    record: (attempt) => fleet.attempts.push(attempt),
    async deliver(first, send) {
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const slot = (first + attempt) % fleet.bots.length;
        const bot = fleet.bots[slot];
        if (!bot) throw new Error(`no process in slot ${slot}`);
        const stopping = fleet.stopping.has(bot);
        const outcome = await send(bot.url, attempt).then(
          async (response) => {
            await response.body?.cancel();
            return response.status;
          },
          () => 'refused' as const,
        );
        fleet.record({ slot, stopping, outcome });
        if (typeof outcome === 'number' && outcome >= 200 && outcome < 300) return slot;
        // Slack's first retry comes at once; give the next backend a moment only after a full round.
        if (attempt % fleet.bots.length === fleet.bots.length - 1) await sleep(200);
      }
      throw new Error(`a request was refused ${MAX_ATTEMPTS} times`);
    },
  };
  return fleet;
}

/** Attempts that reached a stopping process, by how they were answered: `{ 200: 3, refused: 5 }`. */
export function answersWhileStopping(fleet: Fleet): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const a of fleet.attempts.filter((attempt) => attempt.stopping))
    counts[String(a.outcome)] = (counts[String(a.outcome)] ?? 0) + 1;
  return counts;
}
