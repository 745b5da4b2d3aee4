import type { webApi } from '@slack/bolt';
import type { ApprovalRecord } from '../approvals/approval.js';
import type { ApprovalCardStore } from '../approvals/ports.js';
import { nobodyCanDecide } from '../approvals/who-to-tell.js';
import type { CardLocation, ThreadRef, ThreadSurface } from '../conversations/surface-ports.js';
import { AppError, describeError } from '../errors.js';
import { type Logger, silentLogger } from '../logger.js';
import type { ChannelPoster } from '../tools/ports.js';
import { postAnswerMessages } from './answer-messages.js';
import { createAnswerStream } from './answer-stream.js';
import { createCardPublisher, type DeciderDirectory } from './approval-card-publisher.js';
import { buildApprovalCard } from './blocks/approval-card.js';
import { cardMetadata, findCardInThread } from './card-in-thread.js';
import { safeMrkdwn } from './mrkdwn.js';
import { NO_PREVIEWS } from './no-previews.js';
import { createProgressIndicator, StatusWays } from './progress-indicator.js';
import { postOnce, slackErrorCode, withRetryAfter } from './slack-errors.js';
import { readThreadMessages } from './thread-reader.js';

export interface SlackSurface extends ThreadSurface, ChannelPoster {
  /** After an escalation: the card by direct message to those `escalateTo` names, every copy updated. */
  postEscalation(approval: ApprovalRecord): Promise<void>;
  /** `teamId`: the workspace the message goes to, where the bot serves several (else the one it serves). */
  postEphemeral(
    channelId: string,
    userId: string,
    text: string,
    threadTs?: string,
    teamId?: string | undefined,
  ): Promise<void>;
  /** Messages tab: the prompts offered above the message box (agent apps: without a thread). */
  setSuggestedPrompts(
    channel: { teamId: string; channelId: string },
    prompts: readonly { title: string; message: string }[],
    title?: string,
  ): Promise<void>;
}

/** A surface built on one client: every part a thread may use is there. */
export type ClientSurface = SlackSurface &
  Required<
    Pick<SlackSurface, 'postAnswer' | 'startProgress' | 'streamAnswer' | 'readThread' | 'adoptPostedCard'>
  >;

/** Speaks in Slack threads through the Web API. Text from users and the model is escaped before posting. */
export function createSlackSurface(
  client: webApi.WebClient,
  options: {
    cards?: ApprovalCardStore;
    logger?: Logger;
    deciders?: DeciderDirectory;
    /** The client cards are posted with: one that does not retry by itself (default `client`). */
    once?: webApi.WebClient;
  } = {},
): ClientSurface {
  const once = options.once ?? client;
  const logger = options.logger ?? silentLogger;
  const publisher = createCardPublisher({ client, once }, options.cards, logger, options.deciders);
  const nobody = async (approval: ApprovalRecord) =>
    nobodyCanDecide(
      approval.rule,
      approval.requesterId,
      (await options.deciders?.adminsOf(approval.teamId, approval.enterpriseId)) ?? [],
    );
  const postCopies = (approval: ApprovalRecord, options?: { lookFirst?: boolean }) =>
    publisher.postCopies(approval, options).catch((error: unknown) => {
      logger.error('approval card copy could not be posted', {
        approvalId: approval.id,
        channelId: approval.rule.approvalChannel,
        error: describeError(error),
      });
    });
  // What each workspace refused (agent sessions, the thread status), shared by every run in this surface.
  const ways = new StatusWays();
  return {
    async postText(thread: ThreadRef, text: string) {
      await client.chat.postMessage({
        channel: thread.channelId,
        thread_ts: thread.threadTs,
        text: safeMrkdwn(text),
        ...NO_PREVIEWS,
      });
    },
    async postApprovalCard(approval) {
      const card = buildApprovalCard(approval, [], { nobodyCanDecide: await nobody(approval) });
      const post = async (): Promise<CardLocation> => {
        const posted = await once.chat.postMessage({
          channel: approval.channelId,
          thread_ts: approval.threadTs,
          text: card.text,
          blocks: card.blocks,
          metadata: cardMetadata(approval.id),
          ...NO_PREVIEWS,
        });
        if (!posted.ts) throw new AppError('surface.no_message_ts', 'chat.postMessage returned no ts');
        return { channelId: posted.channel ?? approval.channelId, messageTs: posted.ts };
      };
      const location = await postOnce(post, () => findCardInThread(client, approval));
      await postCopies(approval);
      return location;
    },
    async adoptPostedCard(approval) {
      const found = await findCardInThread(client, approval);
      // The try that posted it stopped before recording any copy: the channel's may be there already.
      if (found && (await options.cards?.extraCards(approval.id))?.length === 0)
        await postCopies(approval, { lookFirst: true });
      return found;
    },
    postAnswer: (thread, text, delivery) => postAnswerMessages(client, thread, text, delivery, once),
    startProgress: (target) => createProgressIndicator(client, target, logger, ways),
    streamAnswer: (target) => createAnswerStream(client, target, logger),
    readThread: (thread, options) => readThreadMessages(client, thread, options),
    async setSuggestedPrompts({ channelId }, prompts, title) {
      // No thread_ts: for agent apps a call with one silently does nothing.
      await client.assistant.threads.setSuggestedPrompts({
        channel_id: channelId,
        prompts: [...prompts],
        ...(title ? { title } : {}),
      });
    },
    updateApprovalCard: (approval, update) =>
      publisher.refresh(approval, update).catch((error: unknown) => {
        throw withRetryAfter(error);
      }),
    postEscalation: (approval) => publisher.postEscalation(approval),
    async post(channel, text, options) {
      const previews = options.linkPreviews ? {} : NO_PREVIEWS;
      try {
        await client.chat.postMessage({ channel, text: safeMrkdwn(text), ...previews });
        return { kind: 'posted' };
      } catch (error) {
        // The bot posts only where it is a member: chat:write.public is not requested (docs/installing.md).
        if (slackErrorCode(error) === 'not_in_channel') return { kind: 'not_in_channel' };
        throw error;
      }
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
