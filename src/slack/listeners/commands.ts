import type { App } from '@slack/bolt';
import { describeError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { type ApprovalsCommandDeps, answerApprovalsCommand } from '../approvals-command.js';
import type { SlackMessage } from '../blocks/approval-card.js';
import { isSlackResponseUrl } from '../response-url.js';

export interface CommandListenerDeps extends ApprovalsCommandDeps {
  logger: Logger;
  /** `SLACK_API_URL`: its origin is the one place besides Slack's hosts a response_url may point. */
  apiUrl: string;
}

const FAILURE = 'I could not read the approvals just now; please try again.';

/**
 * `/approvals`: acknowledged at once (Slack waits 3 seconds), then answered ephemerally through the command's
 * response_url. Bolt 5's `respond` throws when that fails, so the failure is logged, never thrown.
 */
export function registerCommandListeners(app: App, deps: CommandListenerDeps): void {
  app.command('/approvals', async ({ command, ack, respond, context }) => {
    await ack();
    if (!isSlackResponseUrl(command.response_url, deps.apiUrl)) {
      deps.logger.warn('/approvals refused: its response_url is not Slack', { userId: command.user_id });
      return;
    }
    let answer: SlackMessage;
    try {
      answer = await answerApprovalsCommand(deps, {
        userId: command.user_id,
        teamId: command.team_id,
        enterpriseId: context.enterpriseId ?? command.enterprise_id,
        text: command.text ?? '',
      });
    } catch (error) {
      deps.logger.error('/approvals failed', { userId: command.user_id, error: describeError(error) });
      answer = { text: FAILURE, blocks: [] };
    }
    try {
      await respond({
        response_type: 'ephemeral',
        text: answer.text,
        ...(answer.blocks.length ? { blocks: answer.blocks } : {}),
      });
    } catch (error) {
      deps.logger.warn('/approvals answer could not be sent', {
        userId: command.user_id,
        error: describeError(error),
      });
    }
  });
}
