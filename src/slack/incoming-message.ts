import { z } from 'zod';
import type { IncomingMessage } from '../conversations/surface-ports.js';

const SLACK_TS = /^\d{1,12}\.\d{1,9}$/;

/** The fields of a message or mention event the bot acts on, as Slack must have sent them. */
const incomingSchema = z.object({
  teamId: z.string().regex(/^[TE][A-Z0-9]{1,30}$/),
  enterpriseId: z
    .string()
    .regex(/^E[A-Z0-9]{1,30}$/)
    .nullish()
    .transform((value) => value ?? undefined),
  channelId: z.string().regex(/^[CDG][A-Z0-9]{1,30}$/),
  threadTs: z.string().regex(SLACK_TS),
  userId: z.string().regex(/^[UW][A-Z0-9]{1,30}$/),
  text: z.string().max(40_000),
  messageTs: z.string().regex(SLACK_TS),
});

/**
 * Removes the mentions of the bot itself (`<@UBOT>`), which only address it; mentions of other people are
 * part of what the user asks and stay. Without the bot's id only a leading mention is removed.
 */
function stripBotMentions(text: string, botUserId: string | undefined): string {
  if (!botUserId) return text.replace(/^\s*<@[A-Z0-9]+(\|[^>]*)?>/, '').trim();
  return text.replace(new RegExp(`<@${botUserId}(\\|[^>]*)?>`, 'g'), '').trim();
}

/**
 * Validates an event's fields (a signed request can still carry any JSON) and strips the mentions; undefined
 * when anything is missing or of the wrong shape, so a malformed event never starts a conversation.
 */
export function parseIncomingMessage(
  raw: Record<Exclude<keyof IncomingMessage, 'enterpriseId'>, unknown> & { enterpriseId?: unknown },
  botUserId?: string,
): IncomingMessage | undefined {
  const parsed = incomingSchema.safeParse(raw);
  const bot = botUserId && /^[UW][A-Z0-9]{1,30}$/.test(botUserId) ? botUserId : undefined;
  return parsed.success ? { ...parsed.data, text: stripBotMentions(parsed.data.text, bot) } : undefined;
}
