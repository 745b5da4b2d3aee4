import type { ThreadRef } from '../conversations/ports.js';

/** Terminal conversations live in their own workspace id, which no Slack workspace can have. */
export const TERMINAL_TEAM_ID = 'local';
const TERMINAL_CHANNEL_ID = 'terminal';

/** The conversation `npm run chat -- --thread NAME` speaks in. */
export function terminalThread(name: string): ThreadRef {
  return { teamId: TERMINAL_TEAM_ID, channelId: TERMINAL_CHANNEL_ID, threadTs: name };
}

export function isTerminalThread(thread: ThreadRef): boolean {
  return thread.teamId === TERMINAL_TEAM_ID;
}
