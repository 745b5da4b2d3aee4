import { z } from 'zod';
import type { IncomingMessage } from '../conversations/ports.js';

const SLACK_TS = /^\d{1,12}\.\d{1,9}$/;

/** The fields of a message or mention event the bot acts on, as Slack must have sent them. */
const incomingSchema = z.object({
  teamId: z.string().regex(/^[TE][A-Z0-9]{1,30}$/),
  channelId: z.string().regex(/^[CDG][A-Z0-9]{1,30}$/),
  threadTs: z.string().regex(SLACK_TS),
  userId: z.string().regex(/^[UW][A-Z0-9]{1,30}$/),
  text: z.string().max(40_000),
  messageTs: z.string().regex(SLACK_TS),
});

/** `<@UBOT>` and any other mention, as the official samples strip it. */
function stripMentions(text: string): string {
  return text.replace(/<@[A-Z0-9]+>/g, '').trim();
}

/**
 * Validates an event's fields (a signed request can still carry any JSON) and strips the mentions; undefined
 * when anything is missing or of the wrong shape, so a malformed event never starts a conversation.
 */
export function parseIncomingMessage(
  raw: Record<keyof IncomingMessage, unknown>,
): IncomingMessage | undefined {
  const parsed = incomingSchema.safeParse(raw);
  return parsed.success ? { ...parsed.data, text: stripMentions(parsed.data.text) } : undefined;
}
