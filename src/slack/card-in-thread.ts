import type { webApi } from '@slack/bolt';
import { z } from 'zod';
import type { ApprovalRecord } from '../approvals/approval.js';
import type { CardLocation } from '../conversations/surface-ports.js';

/** The message metadata type an approval card carries, with the request's id in its payload. */
export const CARD_EVENT_TYPE = 'approval_card';

/** Pages read at most (200 messages each): conversations.replies is rate limited (Tier 3, less for some apps). */
const MAX_PAGES = 5;
const PAGE_SIZE = 200;
/** How long before its request a card is looked for: the card comes after it, whatever the clocks say. */
const CLOCK_MARGIN_MS = 5 * 60_000;

/** What marks a posted message as the card of a request, so a retry can find it (`findCardInThread`). */
export function cardMetadata(approvalId: string) {
  return { event_type: CARD_EVENT_TYPE, event_payload: { approval_id: approvalId } };
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
 * The request's card if it is already in its thread: a post Slack accepted whose answer never reached the
 * process that sent it (a timeout, a crash, a shutdown, a failed record). Read with `conversations.replies` from
 * shortly before the request was made (so its first page holds it however long the thread), up to 1,000
 * messages; undefined when it is not there.
 */
export async function findCardInThread(
  client: webApi.WebClient,
  approval: Pick<ApprovalRecord, 'id' | 'channelId' | 'threadTs' | 'createdAt'>,
): Promise<CardLocation | undefined> {
  const oldest = String(Math.max(0, Math.floor((approval.createdAt - CLOCK_MARGIN_MS) / 1000)));
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const raw: unknown = await client.conversations.replies({
      channel: approval.channelId,
      ts: approval.threadTs,
      oldest,
      include_all_metadata: true,
      limit: PAGE_SIZE,
      ...(cursor ? { cursor } : {}),
    });
    const parsed = repliesSchema.parse(raw);
    const card = parsed.messages.find(
      (message) =>
        message.metadata?.event_type === CARD_EVENT_TYPE &&
        message.metadata.event_payload?.approval_id === approval.id,
    );
    if (card) return { channelId: approval.channelId, messageTs: card.ts };
    cursor = parsed.response_metadata?.next_cursor || undefined;
    if (!cursor) return undefined;
  }
  return undefined;
}
