import type { webApi } from '@slack/bolt';
import type { ApprovalRecord } from '../approvals/approval.js';
import type { ThreadRef, ThreadSurface } from '../conversations/ports.js';
import type { ChannelPoster } from '../tools/ports.js';
import { buildApprovalCard } from './blocks/approval-card.js';
import { safeMrkdwn } from './mrkdwn.js';

export interface CardLocation {
  channelId: string;
  messageTs: string;
}

export interface SlackSurface extends ThreadSurface, ChannelPoster {
  /** Updates a card in place; `fallback` is where a click saw it when its ts was never stored. */
  updateCard(
    approval: ApprovalRecord,
    options?: { fallback?: CardLocation; approvers?: readonly string[] },
  ): Promise<void>;
  postEphemeral(channelId: string, userId: string, text: string, threadTs?: string): Promise<void>;
}

/** Speaks in Slack threads through the Web API. Text from users and the model is escaped before posting. */
export function createSlackSurface(client: webApi.WebClient): SlackSurface {
  const updateCard: SlackSurface['updateCard'] = async (approval, options = {}) => {
    const stored = approval.messageTs
      ? { channelId: approval.channelId, messageTs: approval.messageTs }
      : undefined;
    const { fallback } = options;
    // The clicked card may differ from the stored one when a crash right after posting led to a repost.
    const locations = [stored, fallback].filter((l): l is CardLocation => l !== undefined);
    const distinct = locations.filter(
      (l, i) => locations.findIndex((o) => o.channelId === l.channelId && o.messageTs === l.messageTs) === i,
    );
    const card = buildApprovalCard(approval, options.approvers);
    for (const location of distinct) {
      // Always send the full blocks: an update with text only leaves the old buttons in place.
      await client.chat.update({
        channel: location.channelId,
        ts: location.messageTs,
        text: card.text,
        blocks: card.blocks,
      });
    }
  };
  return {
    async postText(thread: ThreadRef, text: string) {
      await client.chat.postMessage({
        channel: thread.channelId,
        thread_ts: thread.threadTs,
        text: safeMrkdwn(text),
      });
    },
    async postApprovalCard(approval) {
      const card = buildApprovalCard(approval);
      const posted = await client.chat.postMessage({
        channel: approval.channelId,
        thread_ts: approval.threadTs,
        text: card.text,
        blocks: card.blocks,
      });
      if (!posted.ts) throw new Error('chat.postMessage returned no ts');
      return { channelId: posted.channel ?? approval.channelId, messageTs: posted.ts };
    },
    updateApprovalCard: (approval) => updateCard(approval),
    updateCard,
    async post(channel, text) {
      await client.chat.postMessage({ channel, text: safeMrkdwn(text) });
    },
    async postEphemeral(channelId, userId, text, threadTs) {
      await client.chat.postEphemeral({
        channel: channelId,
        user: userId,
        text,
        ...(threadTs ? { thread_ts: threadTs } : {}),
      });
    },
  };
}
