import type { ThreadSurface } from '../conversations/surface-ports.js';
import type { ChannelPoster } from '../tools/ports.js';
import { plainText } from './terminal-text.js';

/**
 * The conversation service's voice in a terminal: answers are printed (Slack markup as plain text); approval "cards" are only recorded
 * (the chat session asks for every pending approval itself, including those of an earlier session).
 */
export function createTerminalSurface(write: (text: string) => void): ThreadSurface & ChannelPoster {
  return {
    async postText(_thread, text) {
      write(`agent> ${plainText(text)}\n`);
    },
    async postApprovalCard(approval) {
      return { channelId: approval.channelId, messageTs: approval.id };
    },
    async updateApprovalCard() {},
    // Not an error (no stack trace in the terminal): the model is told that nothing was posted.
    post: async () => ({ kind: 'no_slack' }),
  };
}
