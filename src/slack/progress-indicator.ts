import type { webApi } from '@slack/bolt';
import type { Progress, ProgressTarget } from '../conversations/surface-ports.js';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import { slackErrorCode } from './slack-errors.js';

/** The reaction shown on the user's message where the thread status is not available. */
export const WORKING_REACTION = 'eyes';

/** How a workspace shows work: Slack's agent session, the assistant thread status, or a reaction. */
export type StatusWay = 'session' | 'thread_status' | 'reaction';

/** How long a workspace's refusal is remembered: after a re-install the session is tried again within this. */
export const REFUSAL_MEMORY_MS = 60 * 60 * 1000;

/**
 * What each workspace refused, remembered (for `REFUSAL_MEMORY_MS`) so that a refused method is not asked again
 * on every message. Only Slack's own answers (`ok: false`) count; a timeout or a network failure proves nothing.
 */
export class StatusWays {
  readonly #refused = new Map<string, { way: StatusWay; until: number }>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** The way to try first in this workspace. */
  of(teamId: string): StatusWay {
    const refused = this.#refused.get(teamId);
    if (!refused || refused.until <= this.#now()) return 'session';
    return refused.way;
  }

  /** `way` was refused in this workspace: from now on the next one is tried first. */
  refused(teamId: string, way: StatusWay): StatusWay {
    const next: StatusWay = way === 'session' ? 'thread_status' : 'reaction';
    const known = this.of(teamId);
    if (rank(next) > rank(known))
      this.#refused.set(teamId, { way: next, until: this.#now() + REFUSAL_MEMORY_MS });
    return next;
  }
}

function rank(way: StatusWay): number {
  return way === 'session' ? 0 : way === 'thread_status' ? 1 : 2;
}

/** Slack answered `ok: false`: a refusal (not a timeout, a rate limit or a network failure). */
const isRefusal = (error: unknown): boolean => slackErrorCode(error) !== undefined;

/**
 * Shows that the bot works on a message, in the first way the workspace allows:
 * - Slack's agent session (`agents.sessions.setStatus`): `processing` while it works (Slack shows its stop
 *   button), `suspended` while a card waits for a person, `active` when done; the session is created with a
 *   title from the first message;
 * - where the session is refused (an app not declared as an agent), the thread status
 *   (`assistant.threads.setStatus`, "is thinking…", "is running list_notes…"; it accepts `chat:write` since
 *   Slack's changelog of 2026-03-05), cleared when it waits or is done;
 * - where that is refused too, a 👀 reaction on the user's message, removed when it waits or is done.
 * A refusal is remembered for the workspace (`StatusWays`). Calls run one after another in the background, so
 * a slow or failing Slack never delays the answer.
 */
export function createProgressIndicator(
  client: webApi.WebClient,
  target: ProgressTarget,
  logger: Logger,
  ways: StatusWays,
): Progress {
  let reacted = false;
  let titled = false;
  // The first call waits for the next turn of the event loop, so the request to the model, which starts in
  // the same turn, goes out first; the status is shown a moment later.
  let chain: Promise<void> = new Promise((resolve) => setImmediate(resolve));
  const enqueue = (what: string, step: () => Promise<void>) => {
    chain = chain.then(step).catch((error: unknown) => {
      logger.warn(`progress indicator: ${what} failed`, {
        channelId: target.channelId,
        error: describeError(error),
      });
    });
    return chain;
  };
  const thread = { channel_id: target.channelId, thread_ts: target.threadTs };
  const session = async (status: 'processing' | 'suspended' | 'active') => {
    const creation =
      status === 'processing' && !titled
        ? {
            ...(target.title ? { title: target.title } : {}),
            ...(target.initiatorUserId ? { initiator_user_id: target.initiatorUserId } : {}),
          }
        : {};
    await client.agents.sessions.setStatus({ ...thread, status, ...creation });
    if (status === 'processing') titled = true;
  };
  const threadStatus = (status: string) => client.assistant.threads.setStatus({ ...thread, status });
  const react = async () => {
    if (reacted || !target.messageTs) return;
    await client.reactions.add({
      channel: target.channelId,
      timestamp: target.messageTs,
      name: WORKING_REACTION,
    });
    reacted = true;
  };
  const unreact = async () => {
    if (!reacted) return;
    reacted = false;
    await client.reactions.remove({
      channel: target.channelId,
      timestamp: target.messageTs ?? '',
      name: WORKING_REACTION,
    });
  };
  /** Shows `state` in the workspace's way, falling back to the next way when Slack refuses one. */
  const show = async (state: { session: 'processing' | 'suspended' | 'active'; text: string }) => {
    let way = ways.of(target.teamId);
    for (;;) {
      try {
        switch (way) {
          case 'session':
            await session(state.session);
            return;
          case 'thread_status':
            await threadStatus(state.text);
            return;
          case 'reaction':
            if (state.session === 'processing') await react();
            else await unreact();
            return;
        }
      } catch (error) {
        if (way === 'reaction' || !isRefusal(error)) throw error;
        logger.info(`${way === 'session' ? 'agent session' : 'thread status'} unavailable; falling back`, {
          teamId: target.teamId,
          error: describeError(error),
        });
        way = ways.refused(target.teamId, way);
        // Nothing to undo in a way never shown, and nothing to clear there.
        if (state.session !== 'processing') {
          if (way === 'reaction') await unreact();
          return;
        }
      }
    }
  };

  return {
    set(status) {
      void enqueue('status', () => show({ session: 'processing', text: status }));
    },
    suspend() {
      return enqueue('waiting', async () => {
        await unreact();
        await show({ session: 'suspended', text: '' });
      });
    },
    clear() {
      return enqueue('clearing', async () => {
        await unreact();
        await show({ session: 'active', text: '' });
      });
    },
  };
}
