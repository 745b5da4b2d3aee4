import type { SlackCall } from './fake-slack.js';
import { isRecord } from './json-value.js';

/** A message as people in Slack would see it, rebuilt from the Web API calls the fake recorded. */
export interface SeenMessage {
  channel: string;
  threadTs: string | undefined;
  /** What the message shows: the markdown block's text, the streamed text, or the plain `text`. */
  text: string;
  via: 'post' | 'stream';
  /** Streams only: whether `chat.stopStream` ended it. */
  finished: boolean;
}

function markdownOf(call: SlackCall): string {
  const direct = call.params.markdown_text;
  if (typeof direct === 'string') return direct;
  const chunks = call.params.chunks;
  if (!Array.isArray(chunks)) return '';
  return chunks
    .map((chunk) => (isRecord(chunk) && typeof chunk.text === 'string' ? chunk.text : ''))
    .join('');
}

function postedText(call: SlackCall): string | undefined {
  const blocks = call.params.blocks;
  if (blocks === undefined) {
    const text = call.params.text ?? call.params.markdown_text;
    return typeof text === 'string' ? text : undefined;
  }
  if (!Array.isArray(blocks) || blocks.length === 0) return undefined;
  if (!blocks.every((block) => isRecord(block) && block.type === 'markdown')) return undefined;
  return blocks.map((block) => (isRecord(block) ? String(block.text) : '')).join('');
}

function replyTs(call: SlackCall): string | undefined {
  return isRecord(call.reply) && typeof call.reply.ts === 'string' ? call.reply.ts : undefined;
}

/**
 * The thread messages other than Block Kit cards, in the order they appeared: plain posts, answers posted
 * as markdown blocks, and streamed answers (`chat.startStream` + `appendStream` + `stopStream`, joined). A
 * stream that showed only tasks (`task_update` chunks, no text) is left out: read its chunks instead.
 */
export function seenMessages(calls: readonly SlackCall[]): SeenMessage[] {
  const seen: SeenMessage[] = [];
  const streams = new Map<string, SeenMessage>();
  for (const call of calls) {
    const channel = String(call.params.channel ?? '');
    if (call.method === 'chat.postMessage') {
      const text = postedText(call);
      // A post Slack refused shows nothing (one still unanswered is counted as shown).
      if (text === undefined || (isRecord(call.reply) && call.reply.ok === false)) continue;
      const threadTs = typeof call.params.thread_ts === 'string' ? call.params.thread_ts : undefined;
      seen.push({ channel, threadTs, text, via: 'post', finished: true });
    } else if (call.method === 'chat.startStream') {
      const ts = replyTs(call);
      const threadTs = typeof call.params.thread_ts === 'string' ? call.params.thread_ts : undefined;
      const message: SeenMessage = {
        channel,
        threadTs,
        text: markdownOf(call),
        via: 'stream',
        finished: false,
      };
      seen.push(message);
      if (ts) streams.set(ts, message);
    } else if (call.method === 'chat.appendStream' || call.method === 'chat.stopStream') {
      const message = streams.get(String(call.params.ts));
      if (!message || !isRecord(call.reply) || call.reply.ok !== true) continue;
      message.text += markdownOf(call);
      if (call.method === 'chat.stopStream') message.finished = true;
    }
  }
  return seen.filter((message) => message.via === 'post' || message.text !== '');
}
