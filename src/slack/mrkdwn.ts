/**
 * Escapes text from users or the model for Slack mrkdwn: only `&`, `<` and `>` (Slack's own rule), so nobody
 * can forge `<!channel>`, `<!here>` or a disguised link through the bot. Plain user and channel mentions
 * (`<@U123>`, `<#C123>`) are kept, since they only name someone.
 */
export function safeMrkdwn(text: string): string {
  return escapeMrkdwn(text).replace(/&lt;([@#][UWC][A-Z0-9]{2,})&gt;/g, '<$1>');
}

/** Escapes everything, mentions included: for text shown inside code blocks. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The text `escapeMrkdwn` was given back (the escaped text holds no `&` but those of its escapes). */
export function unescapeMrkdwn(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/** Cuts text to `max` characters at most, saying visibly that it was cut. */
export function truncateVisibly(text: string, max: number, note = '… (truncated)'): string {
  if (text.length <= max) return text;
  return `${text.slice(0, Math.max(0, max - note.length))}${note}`;
}

/** A Slack date token that every reader sees in their own time zone. */
export function slackDate(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  return `<!date^${seconds}^{date_short_pretty} at {time}|${new Date(ms).toISOString()}>`;
}
