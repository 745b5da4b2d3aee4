import { z } from 'zod';
import { defineTool } from '../agent/tool.js';
import { escapeForSlack } from '../preview-text.js';
import type { ChannelPoster } from './ports.js';

/**
 * `linkPreviews`: the policy's `postMessageLinkPreviews` in force when a message is posted; without it Slack
 * fetches nothing the text links to.
 */
export function createPostMessageTool(
  poster: ChannelPoster,
  options: { linkPreviews?: (() => boolean) | undefined } = {},
) {
  return defineTool({
    name: 'post_message',
    description: 'Posts a message as the bot to a Slack channel, given its ID (C…).',
    parameters: z.object({
      channel: z.string().regex(/^[CGD][A-Z0-9]{2,}$/, 'a Slack channel ID such as C012ABCDEF'),
      text: z.string().min(1).max(4000),
    }),
    needsApproval: true,
    // The message as it will look, quoted; escaped, so a mention in it pings nobody from the card.
    preview: async ({ channel, text }) => {
      const lines = text.split('\n').filter((line) => line.trim() !== '');
      const first = escapeForSlack(lines[0] ?? '');
      const more =
        lines.length > 1 ? ` (and ${lines.length - 1} more line${lines.length > 2 ? 's' : ''})` : '';
      return `Posts to <#${channel}> as the bot:\n>${first}${more}`;
    },
    execute: async ({ channel, text }, context) => {
      const outcome = await poster.post(channel, text, {
        teamId: context.teamId,
        linkPreviews: options.linkPreviews?.() ?? false,
      });
      switch (outcome.kind) {
        case 'posted':
          return `Posted the message to <#${channel}>.`;
        case 'not_in_channel':
          // The people who can fix it read the thread; the model is told too, so it does not retry blindly.
          await poster.postText(
            context,
            `I could not post to <#${channel}>: the bot is not a member of that channel. Invite the bot to <#${channel}> (type /invite and the bot's name in that channel), then ask again.`,
          );
          return `Nothing was posted: the bot is not a member of <#${channel}>. The thread was asked to invite the bot to <#${channel}>; do not try again until someone says they did.`;
        case 'no_slack':
          return 'Nothing was posted: this conversation is not connected to Slack, so post_message cannot post anywhere.';
      }
    },
  });
}
