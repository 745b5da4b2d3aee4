/** Characters of one text value a page shows of an audit payload; the export gives every character. */
export const PAGE_TEXT_MAX_CHARS = 2_000;

/**
 * The value with every string longer than `max` cut, saying how much was left out, for a page to show: a tool
 * output of megabytes stays in the audit log (and its export) whole, not in the browser.
 *
 * @example
 * shortenedForPage({ result: 'x'.repeat(5000) }, 10)
 * // { result: 'xxxxxxxxxx… [4,990 more characters: `npm run audit -- export` has them]' }
 */
export function shortenedForPage(value: unknown, max = PAGE_TEXT_MAX_CHARS): unknown {
  if (typeof value === 'string') {
    if (value.length <= max) return value;
    // Not between the two halves of a surrogate pair.
    const end = /[\uD800-\uDBFF]/.test(value.charAt(max - 1)) ? max - 1 : max;
    const more = (value.length - end).toLocaleString('en-US');
    return `${value.slice(0, end)}… [${more} more characters: \`npm run audit -- export\` has them]`;
  }
  if (Array.isArray(value)) return value.map((item) => shortenedForPage(item, max));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, shortenedForPage(item, max)]));
  return value;
}
