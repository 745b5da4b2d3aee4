import type { ThreadRef } from '../conversations/ports.js';

/** Terminal conversations are shown under their own workspace id (the `surface` column tells them apart). */
export const TERMINAL_TEAM_ID = 'local';
const TERMINAL_CHANNEL_ID = 'terminal';

/** The conversation `npm run chat -- --thread NAME` speaks in. */
export function terminalThread(name: string): ThreadRef {
  return { teamId: TERMINAL_TEAM_ID, channelId: TERMINAL_CHANNEL_ID, threadTs: name };
}
