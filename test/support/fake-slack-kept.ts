import type { FakeReply } from './fake-slack.js';
import { stringOr } from './json-value.js';

/*
 * The messages the fake Slack keeps, as Slack does: each thread's replies for `conversations.replies`, each
 * channel's own messages for `conversations.history`, changed by `chat.update`.
 */

/** Where the fake keeps messages, by channel (and thread ts), oldest first. */
export interface KeptMessages {
  /** The replies posted in each thread, as `conversations.replies` lists them. */
  threads: Map<string, Record<string, unknown>[]>;
  /** The messages posted in each channel outside threads, as `conversations.history` lists them. */
  channels: Map<string, Record<string, unknown>[]>;
}

const ok = (fields: Record<string, unknown>): FakeReply => ({ body: { ok: true, ...fields } });

/** A Slack timestamp (`seconds.micros`) in microseconds, for comparing. */
const micros = (ts: string): number => {
  const [seconds = '0', fraction = '0'] = ts.split('.');
  return Number(seconds) * 1_000_000 + Number(fraction.padEnd(6, '0').slice(0, 6));
};

const threadKey = (channel: string | undefined, threadTs: string | undefined) => `${channel}/${threadTs}`;

/** Keeps a posted message: in its thread, or in its channel when it starts no thread's reply. */
export function keepMessage(
  ids: KeptMessages,
  channel: string | undefined,
  message: Record<string, unknown>,
): void {
  if (channel === undefined) return;
  const threadTs = stringOr(message.thread_ts);
  const [kept, key] =
    threadTs === undefined ? [ids.channels, channel] : [ids.threads, threadKey(channel, threadTs)];
  kept.set(key, [...(kept.get(key) ?? []), message]);
}

/** chat.update changes a kept message's text and blocks; its metadata stays unless the update sends new. */
export function updateKeptMessage(
  ids: KeptMessages,
  channel: string | undefined,
  params: Record<string, unknown>,
): void {
  const lists = [
    ...[...ids.threads].filter(([key]) => key.startsWith(`${channel}/`)).map(([, messages]) => messages),
    ids.channels.get(String(channel)) ?? [],
  ];
  for (const messages of lists) {
    const kept = messages.find((m) => m.ts === params.ts);
    if (!kept) continue;
    if (params.text !== undefined) kept.text = params.text;
    if (params.blocks !== undefined) kept.blocks = params.blocks;
    if (params.metadata !== undefined) kept.metadata = params.metadata;
  }
}

/** Whether a kept message lies between `oldest` and `latest` (each excluded unless `inclusive`). */
function windowOf(params: Record<string, unknown>): (message: Record<string, unknown>) => boolean {
  const inclusive = params.inclusive === true || params.inclusive === 'true';
  const oldest = stringOr(params.oldest);
  const latest = stringOr(params.latest);
  return (message) => {
    const at = micros(String(message.ts));
    if (oldest !== undefined && (inclusive ? at < micros(oldest) : at <= micros(oldest))) return false;
    return latest === undefined || (inclusive ? at <= micros(latest) : at < micros(latest));
  };
}

/** A page of `messages` from `cursor`, with `next_cursor`; message metadata only with `include_all_metadata`. */
function page(
  params: Record<string, unknown>,
  messages: Record<string, unknown>[],
  size: { default: number; max: number },
): FakeReply {
  const limit = Math.min(Number(params.limit ?? size.default) || size.default, size.max);
  const start = Number(stringOr(params.cursor) ?? 0) || 0;
  const withMetadata = params.include_all_metadata === true || params.include_all_metadata === 'true';
  const shown = messages
    .slice(start, start + limit)
    .map(({ metadata, ...message }) =>
      withMetadata && metadata !== undefined ? { ...message, metadata } : message,
    );
  const more = start + limit < messages.length;
  return ok({
    messages: shown,
    has_more: more,
    ...(more ? { response_metadata: { next_cursor: String(start + limit) } } : {}),
  });
}

/**
 * `conversations.replies` of the replies kept in the thread (a fake posts no parent message) between `oldest`
 * and `latest`, oldest first, in pages (Slack's default and largest page: 1,000).
 */
export function repliesReply(params: Record<string, unknown>, ids: KeptMessages): FakeReply {
  const replies = ids.threads.get(threadKey(stringOr(params.channel), stringOr(params.ts))) ?? [];
  return page(params, replies.filter(windowOf(params)), { default: 1000, max: 1000 });
}

/**
 * `conversations.history` of the messages kept in the channel itself (not its threads' replies) between
 * `oldest` and `latest`, newest first, in pages (Slack's default page: 100, its largest 999).
 */
export function historyReply(params: Record<string, unknown>, ids: KeptMessages): FakeReply {
  const messages = ids.channels.get(String(stringOr(params.channel))) ?? [];
  return page(params, messages.filter(windowOf(params)).reverse(), { default: 100, max: 999 });
}
