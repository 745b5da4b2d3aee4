import { safeMrkdwn } from './mrkdwn.js';

// The model's answers as Slack Markdown (`markdown_text`): made safe, split into messages, released while they
// stream. Text the bot writes into its own cards and replies (mrkdwn) is escaped by ./mrkdwn.ts.

/**
 * Budget for one answer message, in characters after escaping. Slack caps `markdown_text` at 12,000 and
 * rejects messages whose blocks hold about that much text in total (`msg_blocks_too_long`); a margin stays.
 */
export const MAX_ANSWER_CHARS = 10_000;

/** `[label](url)` on one line; images (`![alt](url)`) too. */
const INLINE_LINK = /!?\[([^\]\n]*)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"\n]*")?\s*\)/g;
/** A reference definition (`[ref]: https://…`) would make `[label][ref]` a link whose target is hidden. */
const LINK_DEFINITION = /^( {0,3})\[(?=[^\]\n]*\]:)/gm;
/** Words some Slack surfaces turn into notifications for everyone. */
const BROADCAST_WORDS = /@(here|channel|everyone)\b/gi;

/**
 * Makes the model's (or a user's) Markdown safe to post as `markdown_text`: Slack's special characters are
 * escaped except plain user and channel mentions, `<!channel>`/`<!here>` cannot be formed, and no link can hide
 * its target (`[label](url)` becomes `label (url)`; any other `](` is escaped so it cannot form a link).
 * Every rule works within one line, so a stream can sanitise its text line by line and get the same result.
 *
 * @example safeMarkdown('**Hi** <@U1>, see [docs](https://x.y) <!here>')
 * // '**Hi** <@U1>, see docs (https://x.y) &lt;!here&gt;'
 */
export function safeMarkdown(text: string): string {
  const unlinked = text
    .replace(INLINE_LINK, (_match, label: string, url: string) =>
      label.trim() === '' || label.trim() === url ? url : `${label} (${url})`,
    )
    .replace(/\]\(/g, ']\\(')
    .replace(LINK_DEFINITION, '$1\\[')
    .replace(BROADCAST_WORDS, '@\u2060$1');
  return safeMrkdwn(unlinked);
}

/** The end of the last paragraph, else line, else word within `max` characters; undefined when none. */
export function softCut(text: string, max: number): number | undefined {
  const window = text.slice(0, max + 1);
  for (const boundary of ['\n\n', '\n', ' ']) {
    const at = window.lastIndexOf(boundary);
    if (at > 0) return at;
  }
  return undefined;
}

/**
 * Where text may be cut: a soft boundary when there is one; a hard cut only when a single word is longer than
 * `max` (never inside an `&…;` escape or a surrogate pair).
 */
export function cutPoint(text: string, max: number): number {
  if (text.length <= max) return text.length;
  const soft = softCut(text, max);
  if (soft !== undefined) return soft;
  let cut = max;
  const amp = text.lastIndexOf('&', cut);
  if (amp > 0 && amp > cut - 6 && !text.slice(amp, cut).includes(';')) cut = amp;
  const code = text.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
  return Math.max(1, cut);
}

/**
 * Splits an (already escaped) answer into messages of at most `max` characters at paragraph boundaries,
 * never mid-word. A code block cut in two is closed at the end of one part and reopened in the next.
 */
export function splitAnswer(text: string, max = MAX_ANSWER_CHARS): string[] {
  return answerParts(text, max).map((part) => part.text);
}

/** One message of a split answer, and the answer from there on (to owe it when Slack refuses this part). */
export interface AnswerPart {
  text: string;
  /** This part and everything after it, as one text (a code block this part continues is opened again). */
  fromHere: string;
}

/** `splitAnswer`, each part with the answer from there on. */
export function answerParts(text: string, max = MAX_ANSWER_CHARS): AnswerPart[] {
  const parts: AnswerPart[] = [];
  let rest = text.trim();
  let reopen = false;
  const fencesOpen = (part: string) => (part.match(/```/g) ?? []).length % 2 === 1;
  while (rest.length > 0) {
    const prefix: string = reopen ? '```\n' : '';
    const take = (budget: number) => (rest.length <= budget ? rest.length : cutPoint(rest, budget));
    let cut = take(max - prefix.length);
    let part: string = prefix + rest.slice(0, cut).trimEnd();
    // A part that leaves a code block open is closed with a fence, which needs room.
    if (fencesOpen(part) && part.length + 4 > max) {
      cut = take(max - prefix.length - 4);
      part = prefix + rest.slice(0, cut).trimEnd();
    }
    const fromHere = prefix + rest;
    reopen = fencesOpen(part) && cut < rest.length;
    if (reopen) part += '\n```';
    parts.push({ text: part, fromHere });
    rest = rest.slice(cut).trimStart();
  }
  return parts;
}

/**
 * How much of streamed text is settled, from `from` (a point already released): every finished line, then the
 * current line up to its last space outside `[…]`, `](…)` and `<…>`. The sanitiser works within lines and no
 * construct it rewrites spans such a space, so releasing settled text piece by piece gives the same result as
 * sanitising the whole answer at once.
 */
export function settledLength(text: string, from: number): number {
  const lineStart = Math.max(from, text.lastIndexOf('\n') + 1);
  let brackets = 0;
  let closer: string | undefined;
  let settled = lineStart;
  for (let i = lineStart; i < text.length; i += 1) {
    const c = text[i];
    const next = text[i + 1];
    if (closer !== undefined) {
      if (c === closer) closer = undefined;
    } else if (c === '<' && next !== ' ') closer = '>';
    else if (c === '[') brackets += 1;
    else if (c === ']') {
      // Whether `(` follows is not known yet at the end of the text: nothing after it is settled.
      if (next === undefined) break;
      brackets = Math.max(0, brackets - 1);
      if (next === '(') closer = ')';
    } else if (c === ' ' && brackets === 0) settled = i + 1;
  }
  return settled;
}
