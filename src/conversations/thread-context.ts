import type { HistoryItem } from '../agent/history.js';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { IncomingMessage, ThreadHistory } from './surface-ports.js';

/** Characters kept of each earlier message: context, not a transcript. */
const MAX_MESSAGE_CHARS = 2000;

/**
 * When the bot is first mentioned inside a thread that already has messages, reads up to `limit` of them so
 * the model knows what the thread is about. Stored once as a `thread_context` history item, so later turns
 * neither fetch nor repeat it. Failing to read the thread only loses the context, never the message.
 */
export async function readThreadContext(
  surface: ThreadHistory,
  message: IncomingMessage,
  limit: number,
  logger: Logger,
): Promise<HistoryItem | undefined> {
  if (limit <= 0 || !surface.readThread || message.threadTs === message.messageTs) return undefined;
  try {
    const messages = await surface.readThread(message, { before: message.messageTs, limit });
    if (messages.length === 0) return undefined;
    return {
      kind: 'thread_context',
      data: {
        messages: messages.map((m) => ({
          ts: m.ts,
          author: m.userId ? `<@${m.userId}>` : `${m.botName ?? 'a bot'} (bot)`,
          text: m.text.length > MAX_MESSAGE_CHARS ? `${m.text.slice(0, MAX_MESSAGE_CHARS)}… (cut)` : m.text,
        })),
      },
    };
  } catch (error) {
    logger.warn('thread context could not be read', {
      channelId: message.channelId,
      error: describeError(error),
    });
    return undefined;
  }
}
