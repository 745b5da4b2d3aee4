import type { webApi } from '@slack/bolt';
import { z } from 'zod';

/** Pages read at most (200 messages each): conversations.replies is rate limited (Tier 3, less for some apps). */
const MAX_PAGES = 5;
const PAGE_SIZE = 200;
/** How long before the moment asked for messages are read, whatever the clocks of this host and Slack say. */
const CLOCK_MARGIN_MS = 5 * 60_000;

/** A thread's message as far as what the bot posted is concerned: where it is, and the metadata it carries. */
export interface MessageWithMetadata {
  ts: string;
  metadata?: { event_type: string; event_payload?: Record<string, unknown> | undefined } | undefined;
}

const repliesSchema = z.object({
  messages: z
    .array(
      z.object({
        ts: z.string(),
        metadata: z
          .object({ event_type: z.string(), event_payload: z.record(z.string(), z.unknown()).optional() })
          .optional(),
      }),
    )
    .default([]),
  response_metadata: z.object({ next_cursor: z.string().optional() }).optional(),
});

/**
 * The messages of a thread posted since shortly before `since` (ms), oldest first, with their metadata
 * (`conversations.replies` with `include_all_metadata`), up to 1,000 of them: what a retry reads to find what
 * an earlier try posted. Starting near `since` keeps that in the first page however long the thread.
 */
export async function* threadMessagesSince(
  client: webApi.WebClient,
  thread: { channelId: string; threadTs: string },
  since: number,
): AsyncGenerator<MessageWithMetadata> {
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
    yield* parsed.messages;
    cursor = parsed.response_metadata?.next_cursor || undefined;
    if (!cursor) return;
  }
}
