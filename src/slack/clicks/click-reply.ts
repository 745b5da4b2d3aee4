import type { ApprovalClick } from '../../approvals/click-inbox.js';
import { describeError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { SlackSurface } from '../slack-surface.js';

/** Who clicked, and on which card: where a reply to them goes. */
export type Clicker = Pick<ApprovalClick, 'channelId' | 'threadTs' | 'userId'> & {
  teamId?: string | undefined;
};

/** How a click answers the person who made it: the one thing a click says back, besides what it changes. */
export interface ClickReply {
  /** A private reply to `clicker`; never rejects (a reply that cannot be sent is only logged). */
  tell(clicker: Clicker, text: string): Promise<void>;
}

/**
 * Replies in Slack: an ephemeral message in the card's thread, or, for a click in App Home (no channel), a
 * message in the app's DM with the person. `surface` is the click's own client, which never waits out a rate
 * limit.
 */
export function slackClickReply(options: {
  surface: Pick<SlackSurface, 'postEphemeral'>;
  directMessage: (userId: string, text: string, teamId: string | undefined) => Promise<void>;
  logger: Logger;
}): ClickReply {
  const { surface, directMessage, logger } = options;
  return {
    tell: ({ channelId, threadTs, userId, teamId }, text) =>
      (channelId
        ? surface.postEphemeral(channelId, userId, text, threadTs, teamId)
        : directMessage(userId, text, teamId)
      ).catch((error: unknown) => {
        logger.warn('reply to a click failed', { channelId, error: describeError(error) });
      }),
  };
}
