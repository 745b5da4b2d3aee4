import { createHash } from 'node:crypto';
import type { webApi } from '@slack/bolt';
import { z } from 'zod';
import { UndeliveredAnswer } from '../conversations/run-presenter.js';
import type { AnswerDelivery } from '../conversations/surface-ports.js';
import { answerParts, safeMarkdown } from './answer-markdown.js';
import { unescapeMrkdwn } from './mrkdwn.js';
import { NO_PREVIEWS } from './no-previews.js';
import { outcomeUnknown, withRetryAfter } from './slack-errors.js';

/** The message metadata type of an answer's messages, with the run and a digest of the message's text. */
const ANSWER_EVENT_TYPE = 'run_answer';
/** Pages of the thread read at most (200 messages each): conversations.replies is rate limited. */
const MAX_PAGES = 5;
const PAGE_SIZE = 200;
/** How long before the answer was owed its messages are looked for, whatever the clocks say. */
const CLOCK_MARGIN_MS = 5 * 60_000;

const repliesSchema = z.object({
  messages: z
    .array(
      z.object({
        metadata: z
          .object({ event_type: z.string(), event_payload: z.record(z.string(), z.unknown()).optional() })
          .optional(),
      }),
    )
    .default([]),
  response_metadata: z.object({ next_cursor: z.string().optional() }).optional(),
});

const digestOf = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 32);

/** The digests of the run's answer messages the thread shows, posted since `since` (ms). */
async function shownParts(
  client: webApi.WebClient,
  thread: { channelId: string; threadTs: string },
  runId: string,
  since: number,
): Promise<Set<string>> {
  const shown = new Set<string>();
  const oldest = String(Math.max(0, Math.floor((since - CLOCK_MARGIN_MS) / 1000)));
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const parsed = repliesSchema.parse(
      await client.conversations.replies({
        channel: thread.channelId,
        ts: thread.threadTs,
        oldest,
        include_all_metadata: true,
        limit: PAGE_SIZE,
        ...(cursor ? { cursor } : {}),
      }),
    );
    for (const { metadata } of parsed.messages) {
      const payload = metadata?.event_type === ANSWER_EVENT_TYPE ? metadata.event_payload : undefined;
      if (payload?.run_id === runId && typeof payload.part === 'string') shown.add(payload.part);
    }
    cursor = parsed.response_metadata?.next_cursor || undefined;
    if (!cursor) break;
  }
  return shown;
}

/**
 * Posts an answer as messages with a markdown block, split at paragraph boundaries when long. With the run
 * named, each message carries it (message metadata, with a digest of its text), so what Slack already shows is
 * never posted twice: an answer owed again leaves out the messages the thread shows, and after a post whose
 * outcome is unknown (5xx, timeout) the thread is looked at before posting again. When Slack refuses a message
 * after others were shown, only what it has not shown is owed (`UndeliveredAnswer`).
 *
 * `once`: the client to post with, one that does not retry by itself (a retry of its own would post twice).
 */
export async function postAnswerMessages(
  client: webApi.WebClient,
  thread: { channelId: string; threadTs: string },
  text: string,
  delivery: AnswerDelivery = {},
  once: webApi.WebClient = client,
): Promise<void> {
  const { runId, owedSince } = delivery;
  const shown =
    runId !== undefined && owedSince !== undefined
      ? await shownParts(client, thread, runId, owedSince)
      : new Set<string>();
  for (const [index, part] of answerParts(safeMarkdown(text)).entries()) {
    const digest = digestOf(part.text);
    if (shown.has(digest)) continue;
    const post = () =>
      once.chat.postMessage({
        channel: thread.channelId,
        thread_ts: thread.threadTs,
        // The markdown block renders the model's Markdown; `text` is what notifications show.
        text: part.text,
        blocks: [{ type: 'markdown', text: part.text }],
        ...(runId !== undefined
          ? { metadata: { event_type: ANSWER_EVENT_TYPE, event_payload: { run_id: runId, part: digest } } }
          : {}),
        // The model's text: Slack must not fetch what its links point to.
        ...NO_PREVIEWS,
      });
    try {
      try {
        await post();
      } catch (error) {
        if (runId === undefined || !outcomeUnknown(error)) throw error;
        // Slack may have shown it before its answer was lost: look before posting it again.
        if (!(await shownParts(client, thread, runId, Date.now())).has(digest)) await post();
      }
    } catch (error) {
      if (index === 0) throw withRetryAfter(error);
      // Owed as the model wrote it, to be made safe again when it is posted.
      throw new UndeliveredAnswer(unescapeMrkdwn(part.fromHere), { cause: withRetryAfter(error) });
    }
  }
}

/** The part of an answer still owed after `postAnswerMessages` failed midway; undefined when all of it is. */
export function undeliveredText(error: unknown): string | undefined {
  return error instanceof UndeliveredAnswer ? error.text : undefined;
}
