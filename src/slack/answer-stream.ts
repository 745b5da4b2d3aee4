import type { webApi } from '@slack/bolt';
import type { AnswerStream, AnswerTarget, TaskUpdate } from '../conversations/surface-ports.js';
import { AppError, describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import { cutPoint, MAX_ANSWER_CHARS, safeMarkdown, settledLength, softCut } from './answer-markdown.js';
import { postAnswerMessages, undeliveredText } from './answer-messages.js';

/** Characters gathered before each `chat.appendStream`: fewer calls, far from the rate limits. */
export const STREAM_FLUSH_CHARS = 256;

/**
 * What follows the shown part of an answer the model's connection cut off: the answer asked again comes after
 * it, in the same message, so the thread never holds the cut text as if it were an answer.
 */
export const CUT_OFF_MARK = '…\n\n_(cut off: the connection to the model broke here)_\n\n';

/** Slack's limit on each field of a task chunk. */
const MAX_TASK_FIELD = 256;

/**
 * A task field made safe as an answer is (`safeMarkdown`: no `<!channel>`, `<!subteam^…>` or disguised link can
 * form from a tool's output or name), then cut to Slack's limit, never inside an escape.
 */
function taskField(text: string): string {
  const safe = safeMarkdown(text);
  return safe.length <= MAX_TASK_FIELD ? safe : `${safe.slice(0, cutPoint(safe, MAX_TASK_FIELD - 1))}…`;
}

/**
 * A task as Slack's `task_update` chunk: its title and output, each made safe and within Slack's limit; nothing
 * else (no `details`, no `sources`), so nothing reaches Slack unescaped.
 */
function taskChunk(update: TaskUpdate) {
  return {
    type: 'task_update' as const,
    id: update.id,
    title: taskField(update.title),
    status: update.status,
    ...(update.output ? { output: taskField(update.output) } : {}),
  };
}

/**
 * A link, with a scheme (`https://`, `ftp://`), `www.`, or a bare `host.tld/path`. Streamed messages take no
 * `unfurl_links`/`unfurl_media`, so Slack could preview (fetch) a link the model wrote; an answer is streamed
 * only up to its first link, and the rest is posted as ordinary messages with previews off.
 */
const LINK = /\b[a-z][a-z0-9+.-]*:\/\/|\bwww\.|\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}\//i;

/**
 * Streams an answer into the thread with `chat.startStream` / `appendStream` / `stopStream` as the model writes
 * it, in pieces of at least `STREAM_FLUSH_CHARS` cut only where `settledLength` allows (so each piece is
 * sanitised exactly as the whole message would be). A message that would outgrow Slack's limit is stopped at a
 * paragraph boundary and continued in a new one. Tool calls are `task_update` chunks, sent in order after the
 * text before them, all before `chat.stopStream`. When Slack refuses streaming at any point, what it has not
 * shown yet is posted as ordinary messages at the end (tasks are then left out). Never throws.
 */
export function createAnswerStream(
  client: webApi.WebClient,
  target: AnswerTarget,
  logger: Logger,
): AnswerStream {
  let raw = '';
  let shown = 0;
  let refused = false;
  let message: { ts: string; length: number } | undefined;
  let chain: Promise<void> = Promise.resolve();
  const enqueue = (step: () => Promise<void>) => {
    chain = chain.then(step).catch((error: unknown) => {
      refused = true;
      logger.warn('answer streaming failed; posting it as a message instead', {
        channelId: target.channelId,
        error: describeError(error),
      });
    });
    return chain;
  };

  const stop = async () => {
    if (!message) return;
    const { ts } = message;
    message = undefined;
    await client.chat.stopStream({ channel: target.channelId, ts });
  };
  const sendTask = async (update: TaskUpdate) => {
    const chunks = [taskChunk(update)];
    if (message) {
      await client.chat.appendStream({ channel: target.channelId, ts: message.ts, chunks });
      return;
    }
    const started = await client.chat.startStream({
      channel: target.channelId,
      thread_ts: target.threadTs,
      chunks,
      recipient_team_id: target.teamId,
      ...(target.recipientUserId ? { recipient_user_id: target.recipientUserId } : {}),
    });
    if (!started.ts) throw new AppError('surface.no_message_ts', 'chat.startStream returned no ts');
    message = { ts: started.ts, length: 0 };
  };
  const send = async (text: string) => {
    if (message) {
      await client.chat.appendStream({ channel: target.channelId, ts: message.ts, markdown_text: text });
      message.length += text.length;
      return;
    }
    const started = await client.chat.startStream({
      channel: target.channelId,
      thread_ts: target.threadTs,
      markdown_text: text,
      recipient_team_id: target.teamId,
      ...(target.recipientUserId ? { recipient_user_id: target.recipientUserId } : {}),
    });
    if (!started.ts) throw new AppError('surface.no_message_ts', 'chat.startStream returned no ts');
    message = { ts: started.ts, length: text.length };
  };
  /** Sends escaped text, continuing in a new message where the current one would grow too long. */
  const deliver = async (escaped: string) => {
    let rest = escaped;
    while (rest.length > 0) {
      const room = MAX_ANSWER_CHARS - (message?.length ?? 0);
      if (rest.length <= room) {
        await send(rest);
        return;
      }
      const soft = softCut(rest, room);
      if (soft === undefined && message) {
        await stop();
        continue;
      }
      const cut = soft ?? cutPoint(rest, room);
      await send(rest.slice(0, cut));
      await stop();
      rest = rest.slice(cut).trimStart();
    }
  };
  const flush = (final: boolean) =>
    enqueue(async () => {
      if (refused) return;
      const end = final ? raw.length : settledLength(raw, shown);
      if (end <= shown) return;
      const piece = raw.slice(shown, end);
      if (LINK.test(piece)) {
        // Left for `finish`, which posts it with previews off.
        refused = true;
        return;
      }
      await deliver(safeMarkdown(piece));
      shown = end;
    });

  /** A task was shown after text: the text after it starts a new paragraph. */
  let taskAfterText = false;
  return {
    append(text) {
      if (taskAfterText && text !== '') {
        taskAfterText = false;
        raw += '\n\n';
      }
      raw += text;
      if (!refused && settledLength(raw, shown) - shown >= STREAM_FLUSH_CHARS) void flush(false);
    },
    task(update) {
      // The text so far is complete (the model asked for the call after writing it): it goes first.
      void flush(true);
      void enqueue(async () => {
        if (!refused) await sendTask(update);
      });
      if (raw.trim() !== '') taskAfterText = true;
    },
    cut(text) {
      if (text === '' || !raw.endsWith(text)) return;
      const start = raw.length - text.length;
      const tail = raw.slice(start);
      // Not shown yet: dropped now, so no flush shows it; text appended from now on is the answer asked again.
      raw = raw.slice(0, start);
      void enqueue(async () => {
        // Part of it was shown before it broke off (a flush may have been under way): marked as cut off.
        if (shown > start)
          raw = `${raw.slice(0, start)}${tail.slice(0, shown - start)}${CUT_OFF_MARK}${raw.slice(start)}`;
      });
    },
    async abandon(note) {
      // What was not shown is dropped; the message is stopped (Slack may have stopped it already), after `note`
      // when part of it is shown.
      raw = raw.slice(0, shown);
      await enqueue(async () => {
        if (refused) return;
        if (note && message && shown > 0) await send(note);
        await stop();
      });
    },
    async finish() {
      await flush(true);
      await enqueue(stop);
      const rest = raw.slice(shown).trim();
      if (!refused || rest === '') return '';
      try {
        await postAnswerMessages(client, target, rest);
        return '';
      } catch (error) {
        logger.error('answer could not be posted', {
          channelId: target.channelId,
          error: describeError(error),
        });
        // What Slack showed of it stays shown: only the rest is owed.
        return undeliveredText(error) ?? rest;
      }
    },
  };
}
