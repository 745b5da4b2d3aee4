import { createHash } from 'node:crypto';
import type { webApi } from '@slack/bolt';
import { UndeliveredAnswer } from '../conversations/run-presenter.js';
import type { AnswerDelivery } from '../conversations/surface-ports.js';
import { answerParts, safeMarkdown } from './answer-markdown.js';
import { unescapeMrkdwn } from './mrkdwn.js';
import { NO_PREVIEWS } from './no-previews.js';
import { postOnce, withRetryAfter } from './slack-errors.js';
import { threadRepliesSince } from './thread-reader.js';

/** The message metadata type of an answer's messages, with the run and a digest of the message's text. */
const ANSWER_EVENT_TYPE = 'run_answer';
const digestOf = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 32);

/** The digests of the run's answer messages the thread shows, posted since `since` (ms). */
async function shownParts(
  client: webApi.WebClient,
  thread: { channelId: string; threadTs: string },
  runId: string,
  since: number,
): Promise<Set<string>> {
  const shown = new Set<string>();
  for await (const { metadata } of threadRepliesSince(client, thread, since)) {
    const payload = metadata?.event_type === ANSWER_EVENT_TYPE ? metadata.event_payload : undefined;
    if (payload?.run_id === runId && typeof payload.part === 'string') shown.add(payload.part);
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
    const post = async () => {
      await once.chat.postMessage({
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
      return true as const;
    };
    try {
      if (runId === undefined) await post();
      // A part whose post went unanswered is looked for before it is posted again.
      else
        await postOnce(post, async () =>
          (await shownParts(client, thread, runId, Date.now())).has(digest) ? true : undefined,
        );
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
