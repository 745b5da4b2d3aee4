/** Longest preview kept: one or two lines on a card. */
export const MAX_PREVIEW_LENGTH = 300;

/**
 * Escapes a value for Slack mrkdwn (`&`, `<`, `>`: Slack's own rule), mentions included, so nothing a model
 * sends can ping anyone (`<!channel>`, `<@U…>`) or disguise a link in a preview; objects are shown as JSON.
 */
export function escapeForSlack(value: unknown): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * A preview kept to two lines and `MAX_PREVIEW_LENGTH` characters (cut visibly, never inside an entity);
 * undefined when blank.
 */
export function trimPreview(text: string): string | undefined {
  const lines = text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const kept = lines.slice(0, 2).join('\n') + (lines.length > 2 ? ' …' : '');
  if (kept === '') return undefined;
  if (kept.length <= MAX_PREVIEW_LENGTH) return kept;
  return `${kept.slice(0, MAX_PREVIEW_LENGTH - 1).replace(/&[a-z]{0,3}$/, '')}…`;
}
