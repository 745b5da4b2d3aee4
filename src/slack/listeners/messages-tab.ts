import type { App } from '@slack/bolt';
import type { WelcomeService } from '../../conversations/welcome-service.js';
import { describeError } from '../../errors.js';
import type { Logger } from '../../logger.js';

export interface MessagesTabListenerDeps {
  welcome: WelcomeService;
  logger: Logger;
}

/**
 * `app_home_opened` fires for the Home tab and for the Messages tab (the agent messaging experience); this
 * listener handles only `tab: 'messages'`, where people DM the agent. Messages written there arrive as
 * `message.im` and are handled like any other conversation.
 */
export function registerMessagesTabListener(app: App, deps: MessagesTabListenerDeps): void {
  app.event('app_home_opened', async ({ event, body, context }) => {
    if (event.tab !== 'messages') return;
    const teamId = context.teamId ?? body.team_id;
    try {
      await deps.welcome.messagesTabOpened({ teamId, userId: event.user, channelId: event.channel });
    } catch (error) {
      deps.logger.error('messages tab could not be set up', { error: describeError(error) });
    }
  });
}
