import type { App } from '@slack/bolt';
import { describeError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { HomePublisher } from '../home-publisher.js';

export interface HomeListenerDeps {
  home: HomePublisher;
  logger: Logger;
}

/**
 * Publishes the Home tab whenever someone opens it. Slack sends `app_home_opened` for the Messages tab too
 * (`tab: 'messages'`); that one belongs to the conversation listeners.
 */
export function registerHomeListeners(app: App, deps: HomeListenerDeps): void {
  app.event('app_home_opened', async ({ event, body, context }) => {
    if (event.tab !== 'home') return;
    const workspace = {
      teamId: context.teamId ?? body.team_id,
      enterpriseId: context.enterpriseId ?? body.enterprise_id,
    };
    await deps.home.publish(event.user, workspace).catch((error: unknown) => {
      deps.logger.warn('home could not be published', { userId: event.user, error: describeError(error) });
    });
  });
}
