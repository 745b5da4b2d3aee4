/**
 * How much of a tool's output the model reads. Every model call carries every earlier output of the
 * conversation, so one tool that returns a large listing would otherwise push the conversation past the
 * model's context window.
 */

/** A tool's output as the model reads it, and whether (and how much) of it was cut. */
export interface BoundedOutput {
  /** What the model reads: the whole output, or its head, a note and its tail. */
  text: string;
  /** Null when the output was short enough to be read whole. */
  cut: { totalChars: number; hiddenChars: number } | null;
}

/** Share of the room left to the end of the output; the rest goes to its head. */
const TAIL_SHARE = 1 / 8;

const count = (n: number) => n.toLocaleString('en-US');

/** The line that replaces the middle of a cut output: how much is missing, and how to ask for less. */
export function cutNote(hiddenChars: number, totalChars: number): string {
  return `[output cut: ${count(hiddenChars)} of ${count(totalChars)} characters not shown; call the tool again with narrower arguments to see more]`;
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/**
 * The output whole when it has at most `maxChars` characters (UTF-16 code units, as JavaScript counts them),
 * else at most `maxChars` characters: the head, a line saying how much was cut and how to ask for less, and a
 * short tail. The tail is kept because the end of an output is often what the model needs to go on: a total,
 * the cursor of the next page, an error after a long log; it also shows that the output did end. No cut splits
 * a surrogate pair, so the text stays valid Unicode.
 *
 * @example
 * boundToolOutput('a'.repeat(20_000), 16_000).text
 * // 'aaaa…aaa\n[output cut: 4,144 of 20,000 characters not shown; call the tool again …]\naaa…a'
 */
export function boundToolOutput(output: string, maxChars: number): BoundedOutput {
  if (output.length <= maxChars) return { text: output, cut: null };
  // The note's longest form (every character hidden) with the two line breaks around it.
  const room = Math.max(0, maxChars - cutNote(output.length, output.length).length - 2);
  const tailChars = Math.floor(room * TAIL_SHARE);
  let headEnd = room - tailChars;
  if (headEnd > 0 && isHighSurrogate(output.charCodeAt(headEnd - 1))) headEnd -= 1;
  let tailStart = output.length - tailChars;
  if (tailChars > 0 && isLowSurrogate(output.charCodeAt(tailStart))) tailStart += 1;
  const hiddenChars = tailStart - headEnd;
  const note = cutNote(hiddenChars, output.length);
  const tail = tailStart < output.length ? `\n${output.slice(tailStart)}` : '';
  return {
    text: `${output.slice(0, headEnd)}\n${note}${tail}`,
    cut: { totalChars: output.length, hiddenChars },
  };
}
