import type { webApi } from '@slack/bolt';
import { z } from 'zod';
import type { ThreadMessage, ThreadRef } from '../conversations/surface-ports.js';

const PAGE_SIZE = 200;
/** Pages read at most: conversations.replies is rate limited, and context from long ago matters little. */
const MAX_PAGES = 5;
const KEPT_SUBTYPES = new Set(['bot_message', 'thread_broadcast', 'file_share', 'me_message']);
/** How long before the moment asked for messages are read, whatever the clocks of this host and Slack say. */
const CLOCK_MARGIN_MS = 5 * 60_000;

const repliesSchema = z.object({
  messages: z
    .array(
      z.object({
        ts: z.string(),
        text: z.string().optional(),
        user: z.string().optional(),
        subtype: z.string().optional(),
        bot_id: z.string().optional(),
        username: z.string().optional(),
        bot_profile: z.object({ name: z.string().optional() }).optional(),
        metadata: z
          .object({ event_type: z.string(), event_payload: z.record(z.string(), z.unknown()).optional() })
          .optional(),
      }),
    )
    .default([]),
  response_metadata: z.object({ next_cursor: z.string().optional() }).optional(),
});

/** A message of a thread as `conversations.replies` gives it (the fields the bot reads). */
export type ThreadReply = z.infer<typeof repliesSchema>['messages'][number];

/**
 * The messages of a thread with `conversations.replies`, oldest first, page by page (up to 1,000): those after
 * `oldest` and before `latest` (Slack timestamps, each excluded), with their metadata when `metadata` is set.
 */
function threadReplies(
  client: webApi.WebClient,
  thread: { channelId: string; threadTs: string },
  window: { oldest?: string; latest?: string; metadata?: boolean },
): AsyncGenerator<ThreadReply> {
  return pages((cursor) =>
    client.conversations.replies({
      channel: thread.channelId,
      ts: thread.threadTs,
      ...(window.oldest ? { oldest: window.oldest } : {}),
      ...(window.latest ? { latest: window.latest } : {}),
      inclusive: false,
      ...(window.metadata ? { include_all_metadata: true } : {}),
      limit: PAGE_SIZE,
      ...(cursor ? { cursor } : {}),
    }),
  );
}

/** The messages of a listing Slack pages with `next_cursor`, page by page, at most `MAX_PAGES`. */
async function* pages(read: (cursor: string | undefined) => Promise<unknown>): AsyncGenerator<ThreadReply> {
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const parsed = repliesSchema.parse(await read(cursor));
    yield* parsed.messages;
    cursor = parsed.response_metadata?.next_cursor || undefined;
    if (!cursor) return;
  }
}

/**
 * The messages of a thread posted since shortly before `since` (ms), with their metadata: what a retry reads to
 * find what an earlier try posted. Starting near `since` keeps that in the first page however long the thread.
 */
export function threadRepliesSince(
  client: webApi.WebClient,
  thread: { channelId: string; threadTs: string },
  since: number,
): AsyncGenerator<ThreadReply> {
  return threadReplies(client, thread, { oldest: slackSecondsBefore(since), metadata: true });
}

/**
 * The messages of a channel (not its threads' replies) posted since shortly before `since` (ms), newest first,
 * with their metadata (`conversations.history`): what a retry reads to find a message an earlier try posted.
 */
export function channelMessagesSince(
  client: webApi.WebClient,
  channelId: string,
  since: number,
): AsyncGenerator<ThreadReply> {
  return pages((cursor) =>
    client.conversations.history({
      channel: channelId,
      oldest: slackSecondsBefore(since),
      include_all_metadata: true,
      limit: PAGE_SIZE,
      ...(cursor ? { cursor } : {}),
    }),
  );
}

/** A Slack timestamp a little before `ms`, whatever the clocks of this host and Slack say. */
const slackSecondsBefore = (ms: number): string =>
  String(Math.max(0, Math.floor((ms - CLOCK_MARGIN_MS) / 1000)));

/** Compares Slack timestamps (`seconds.micros`) exactly, without floating point. */
function tsBefore(a: string, b: string): boolean {
  const [as = '0', am = '0'] = a.split('.');
  const [bs = '0', bm = '0'] = b.split('.');
  return (
    BigInt(as) * 1_000_000n + BigInt(am.padEnd(6, '0')) < BigInt(bs) * 1_000_000n + BigInt(bm.padEnd(6, '0'))
  );
}

/**
 * Reads the messages of a thread written before `before` with `conversations.replies`: the thread's first
 * message plus the latest `limit - 1` replies, oldest first. Joins, edits and other system messages are left out.
 */
export async function readThreadMessages(
  client: webApi.WebClient,
  thread: ThreadRef,
  options: { before: string; limit: number },
): Promise<ThreadMessage[]> {
  const found: ThreadMessage[] = [];
  for await (const message of threadReplies(client, thread, { latest: options.before })) {
    if (!tsBefore(message.ts, options.before)) continue;
    if (message.subtype !== undefined && !KEPT_SUBTYPES.has(message.subtype)) continue;
    const text = (message.text ?? '').trim();
    if (text === '') continue;
    const botName = message.bot_id ? (message.bot_profile?.name ?? message.username ?? 'a bot') : undefined;
    found.push({
      ts: message.ts,
      text,
      ...(message.user && !botName ? { userId: message.user } : {}),
      ...(botName ? { botName } : {}),
    });
  }
  const unique = [...new Map(found.map((m) => [m.ts, m])).values()];
  if (unique.length <= options.limit) return unique;
  const [first, ...rest] = unique;
  return first && options.limit > 1
    ? [first, ...rest.slice(-(options.limit - 1))]
    : unique.slice(-options.limit);
}
