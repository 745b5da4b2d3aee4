import type { webApi } from '@slack/bolt';
import type { ApprovalRecord } from '../approvals/approval.js';
import type { CardLocation } from '../conversations/surface-ports.js';
import { channelMessagesSince, type ThreadReply, threadRepliesSince } from './thread-reader.js';

/** The message metadata type an approval card carries, with the request's id in its payload. */
export const CARD_EVENT_TYPE = 'approval_card';

/** What marks a posted message as the card of a request, so a retry can find it (`findCardInThread`). */
export function cardMetadata(approvalId: string) {
  return { event_type: CARD_EVENT_TYPE, event_payload: { approval_id: approvalId } };
}

const isCardOf = (approvalId: string, message: ThreadReply) =>
  message.metadata?.event_type === CARD_EVENT_TYPE &&
  message.metadata.event_payload?.approval_id === approvalId;

/**
 * The request's card if it is already in its thread: a post Slack accepted whose answer never reached the
 * process that sent it (a timeout, a crash, a shutdown, a failed record). Read from shortly before the request
 * was made; undefined when it is not there.
 */
export async function findCardInThread(
  client: webApi.WebClient,
  approval: Pick<ApprovalRecord, 'id' | 'channelId' | 'threadTs' | 'createdAt'>,
): Promise<CardLocation | undefined> {
  for await (const message of threadRepliesSince(client, approval, approval.createdAt)) {
    if (isCardOf(approval.id, message)) return { channelId: approval.channelId, messageTs: message.ts };
  }
  return undefined;
}

/** The request's copy if it is already in `channelId` (its approval channel), found as the card is. */
export async function findCopyInChannel(
  client: webApi.WebClient,
  channelId: string,
  approval: Pick<ApprovalRecord, 'id' | 'createdAt'>,
): Promise<CardLocation | undefined> {
  for await (const message of channelMessagesSince(client, channelId, approval.createdAt)) {
    if (isCardOf(approval.id, message)) return { channelId, messageTs: message.ts };
  }
  return undefined;
}
