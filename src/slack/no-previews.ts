import type { webApi } from '@slack/bolt';

/**
 * Slack fetches what links in a message point to (link previews) as soon as it is posted, with no click: text
 * from the model or users could carry data out in a URL. Every message carrying such text turns them off.
 */
export const NO_PREVIEWS = { unfurl_links: false, unfurl_media: false } as const;

/** A direct message to a person (a decision's outcome, a refusal), previews off. */
export function directMessenger(client: webApi.WebClient): (userId: string, text: string) => Promise<void> {
  return (userId, text) =>
    client.chat.postMessage({ channel: userId, text, ...NO_PREVIEWS }).then(() => undefined);
}
