import type { webApi } from '@slack/bolt';
import { z } from 'zod';
import type { ThreadMessage, ThreadRef } from '../conversations/surface-ports.js';

const PAGE_SIZE = 200;
/** Pages read at most: conversations.replies is rate limited, and context from long ago matters little. */
const MAX_PAGES = 5;
const KEPT_SUBTYPES = new Set(['bot_message', 'thread_broadcast', 'file_share', 'me_message']);

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
      }),
    )
    .default([]),
  response_metadata: z.object({ next_cursor: z.string().optional() }).optional(),
});

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
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const raw: unknown = await client.conversations.replies({
      channel: thread.channelId,
      ts: thread.threadTs,
      latest: options.before,
      inclusive: false,
      limit: PAGE_SIZE,
      ...(cursor ? { cursor } : {}),
    });
    const parsed = repliesSchema.parse(raw);
    for (const message of parsed.messages) {
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
    cursor = parsed.response_metadata?.next_cursor || undefined;
    if (!cursor) break;
  }
  const unique = [...new Map(found.map((m) => [m.ts, m])).values()];
  if (unique.length <= options.limit) return unique;
  const [first, ...rest] = unique;
  return first && options.limit > 1
    ? [first, ...rest.slice(-(options.limit - 1))]
    : unique.slice(-options.limit);
}
