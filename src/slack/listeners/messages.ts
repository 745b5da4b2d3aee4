import type { App } from '@slack/bolt';
import type { ConversationService } from '../../conversations/conversation-service.js';
import type { RunWork } from '../../conversations/run-work.js';
import type { IncomingMessage } from '../../conversations/surface-ports.js';
import type { Logger } from '../../logger.js';
import { parseIncomingMessage } from '../incoming-message.js';

export interface MessageListenerDeps {
  conversations: Pick<ConversationService, 'isKnownThread'>;
  /** Takes messages in and drives their runs (in this thread, or in a worker). */
  work: Pick<RunWork, 'message'>;
  logger: Logger;
}

/**
 * Mentions in channels start (or continue) a conversation in the thread; thread replies continue a
 * conversation the bot is already in; every DM is a conversation. Slack delivers a mention in a thread twice
 * (app_mention and message, with different event ids), and retries deliveries: the dedupe keys on both the
 * event id and team + channel + ts, so each message gets one answer.
 */
export function registerMessageListeners(app: App, deps: MessageListenerDeps): void {
  const accept = async (
    eventId: string | undefined,
    raw: Record<keyof IncomingMessage, unknown>,
    botUserId: string | undefined,
  ) => {
    const message = parseIncomingMessage(raw, botUserId);
    if (!message) {
      deps.logger.warn('ignored a message event with missing or malformed fields', { eventId });
      return;
    }
    const keys = [`msg:${message.teamId}:${message.channelId}:${message.messageTs}`];
    if (eventId) keys.push(`event:${eventId}`);
    // Deduplicated, stored and started (or queued) in one transaction, then driven, where the work runs.
    deps.work.message(message, keys);
  };

  app.event('app_mention', async ({ event, body, context }) => {
    if (event.bot_id || !event.user) return;
    const teamId = context.teamId ?? body.team_id;
    await accept(
      body.event_id,
      {
        teamId,
        enterpriseId: context.enterpriseId ?? body.enterprise_id,
        channelId: event.channel,
        threadTs: event.thread_ts ?? event.ts,
        userId: event.user,
        text: event.text,
        messageTs: event.ts,
      },
      context.botUserId,
    );
  });

  app.message(async ({ message, body, context }) => {
    // Edits, deletions, joins and our own card updates (message_changed) all carry a subtype.
    if (message.subtype !== undefined || message.bot_id || !message.user) return;
    const raw = {
      teamId: context.teamId ?? body.team_id,
      enterpriseId: context.enterpriseId ?? body.enterprise_id,
      channelId: message.channel,
      threadTs: message.thread_ts ?? message.ts,
      userId: message.user,
      text: message.text ?? '',
      messageTs: message.ts,
    };
    // In channels, top-level messages reach the bot only through app_mention.
    if (message.channel_type !== 'im') {
      const thread = parseIncomingMessage(raw);
      if (!message.thread_ts || !thread || !(await deps.conversations.isKnownThread(thread))) return;
    }
    await accept(body.event_id, raw, context.botUserId);
  });
}
