import { z } from 'zod';
import { defineTool } from '../agent/tool.js';
import type { ChannelPoster } from './ports.js';

/** `linkPreviews`: the policy's `postMessageLinkPreviews`; without it Slack fetches nothing the text links to. */
export function createPostMessageTool(poster: ChannelPoster, options: { linkPreviews?: boolean } = {}) {
  return defineTool({
    name: 'post_message',
    description: 'Posts a message as the bot to a Slack channel, given its ID (C…).',
    parameters: z.object({
      channel: z.string().regex(/^[CGD][A-Z0-9]{2,}$/, 'a Slack channel ID such as C012ABCDEF'),
      text: z.string().min(1).max(4000),
    }),
    needsApproval: true,
    execute: async ({ channel, text }) => {
      await poster.post(channel, text, { linkPreviews: options.linkPreviews ?? false });
      return `Posted the message to <#${channel}>.`;
    },
  });
}
