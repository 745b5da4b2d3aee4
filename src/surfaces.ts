/**
 * Who serves a conversation: the Slack bot, or the terminal chat (`npm run chat`), whose threads Slack cannot
 * reach. Each leaves the other's conversations alone (recovery, deliveries, deadlines).
 */
export const SURFACES = ['slack', 'terminal'] as const;
export type SurfaceKind = (typeof SURFACES)[number];
