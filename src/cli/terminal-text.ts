/**
 * Slack's message syntax as a terminal shows it: texts written for Slack (the core's messages, a model that
 * writes mentions) keep their meaning without the markup. Mentions become the plain name or ID
 * (`<@alice>` → `alice`), channels `#name` or `#C123`, user groups their handle or `user group S123`, links
 * `label (url)`, dates their fallback text, and `&lt;` `&gt;` `&amp;` their characters.
 *
 * @example
 * plainText('Rejected by <@alice>; see <https://x.example|the log>') // 'Rejected by alice; see the log (https://x.example)'
 */
export function plainText(text: string): string {
  return text
    .replace(/<([^<>\n]+)>/g, (_whole, inner: string) => token(inner))
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&');
}

function token(inner: string): string {
  const bar = inner.indexOf('|');
  const target = bar === -1 ? inner : inner.slice(0, bar);
  const label = bar === -1 ? undefined : inner.slice(bar + 1);
  if (target.startsWith('@')) return label ?? target.slice(1);
  if (target.startsWith('#')) return `#${label ?? target.slice(1)}`;
  if (target.startsWith('!subteam^')) return label ?? `user group ${target.slice('!subteam^'.length)}`;
  if (target.startsWith('!date^')) return label ?? target;
  if (target.startsWith('!')) return label ?? `@${target.slice(1)}`;
  if (/^(https?|mailto):/.test(target)) return label && label !== target ? `${label} (${target})` : target;
  return `<${inner}>`;
}
