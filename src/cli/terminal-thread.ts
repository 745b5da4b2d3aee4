import type { ThreadRef } from '../conversations/surface-ports.js';

/** Terminal conversations are shown under their own workspace id (the `surface` column tells them apart). */
export const TERMINAL_TEAM_ID = 'local';
const TERMINAL_CHANNEL_ID = 'terminal';

/**
 * A name given with `npm run chat -- --user NAME` or `--thread NAME`: the user IDs and thread names of
 * terminal conversations in the database and the audit log.
 */
export const TERMINAL_NAME = /^[a-zA-Z0-9._@-]{1,64}$/;

/** The conversation `npm run chat -- --thread NAME` speaks in. */
export function terminalThread(name: string): ThreadRef {
  return { teamId: TERMINAL_TEAM_ID, channelId: TERMINAL_CHANNEL_ID, threadTs: name };
}
