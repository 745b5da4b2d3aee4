import type { SlackClients } from './installations/team-clients.js';

/**
 * Slack fetches what links in a message point to (link previews) as soon as it is posted, with no click: text
 * from the model or users could carry data out in a URL. Every message carrying such text turns them off.
 */
export const NO_PREVIEWS = { unfurl_links: false, unfurl_media: false } as const;

/** A direct message to a person of `teamId`'s workspace (a decision's outcome, a refusal), previews off. */
export function directMessenger(
  clients: SlackClients,
): (userId: string, text: string, teamId: string | undefined) => Promise<void> {
  return (userId, text, teamId) =>
    clients
      .forTeam(teamId)
      .chat.postMessage({ channel: userId, text, ...NO_PREVIEWS })
      .then(() => undefined);
}
