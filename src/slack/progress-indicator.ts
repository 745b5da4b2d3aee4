import type { webApi } from '@slack/bolt';
import type { Progress, ProgressTarget } from '../conversations/ports.js';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';

/** The reaction shown on the user's message where the thread status is not available. */
export const WORKING_REACTION = 'eyes';

/**
 * Shows that the bot works on a message: the thread status (`assistant.threads.setStatus`, "is thinking…"),
 * or, when Slack refuses it (an app installed without `chat:write`, which the status needs since Slack's
 * changelog of 2026-03-05; a workspace or conversation without the feature),
 * a 👀 reaction on the user's message, removed when the work is done. Calls run one after another in the
 * background, so a slow or failing Slack never delays the answer.
 */
export function createProgressIndicator(
  client: webApi.WebClient,
  target: ProgressTarget,
  logger: Logger,
): Progress {
  let statusRefused = false;
  let reacted = false;
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
  const setStatus = (status: string) =>
    client.assistant.threads.setStatus({ channel_id: target.channelId, thread_ts: target.threadTs, status });
  const react = async () => {
    if (reacted || !target.messageTs) return;
    await client.reactions.add({
      channel: target.channelId,
      timestamp: target.messageTs,
      name: WORKING_REACTION,
    });
    reacted = true;
  };

  return {
    set(status) {
      void enqueue('status', async () => {
        if (!statusRefused) {
          try {
            await setStatus(status);
            return;
          } catch (error) {
            statusRefused = true;
            logger.info('thread status unavailable; reacting instead', { error: describeError(error) });
          }
        }
        await react();
      });
    },
    clear() {
      return enqueue('clearing', async () => {
        if (reacted) {
          reacted = false;
          await client.reactions.remove({
            channel: target.channelId,
            timestamp: target.messageTs ?? '',
            name: WORKING_REACTION,
          });
        }
        if (!statusRefused) await setStatus('');
      });
    },
  };
}
