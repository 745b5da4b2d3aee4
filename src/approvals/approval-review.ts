import { z } from 'zod';

/** The actor of a decision the reviewer took (`autoApprove: "review"`), in the audit log and `decided_by`. */
export const REVIEWER_ACTOR = 'reviewer';

/** Longest summary and flag kept (the card shows them whole; a model may write far more). */
const MAX_SUMMARY = 300;
const MAX_FLAG = 150;
const MAX_FLAGS = 5;

/**
 * A reviewer's note on a request, written by a model before the card was posted: one line of summary and the
 * flags it raised. `structured: false` when its answer was not the JSON asked for: the text is kept as the
 * summary, and such a note never lets the reviewer approve (it could not say whether anything was wrong).
 */
export const approvalReviewSchema = z.object({
  summary: z.string(),
  flags: z.array(z.string()),
  structured: z.boolean(),
});
export type ApprovalReview = z.infer<typeof approvalReviewSchema>;

/** What the model is asked to answer; each field is read on its own, so a partly wrong answer keeps the rest. */
const answerSchema = z.looseObject({
  summary: z.unknown().optional(),
  flags: z.unknown().optional(),
});

/**
 * Reads a reviewer's answer, whatever the server made of "answer in JSON": a bare object, one inside a code
 * fence or after some words, a reasoning block before it (`<think>…</think>`), flags as one string. An answer
 * with no readable object is kept as text (`structured: false`); an empty one is no review at all.
 *
 * @example
 * parseReviewAnswer('{"summary": "Deletes note 12", "flags": []}');
 * // { summary: 'Deletes note 12', flags: [], structured: true }
 */
export function parseReviewAnswer(text: string): ApprovalReview | undefined {
  const visible = text.replace(/<think>[\s\S]*?<\/think>/gi, '').trim();
  if (visible === '') return undefined;
  const object = firstObject(visible);
  if (object) {
    const summary = typeof object.summary === 'string' ? oneLine(object.summary, MAX_SUMMARY) : '';
    const flags = readFlags(object.flags);
    if (summary !== '' || flags !== undefined)
      return { summary, flags: flags ?? [], structured: flags !== undefined };
  }
  return {
    summary: oneLine(visible.replace(/```(?:json)?/gi, ''), MAX_SUMMARY),
    flags: [],
    structured: false,
  };
}

/** `flags` as the model wrote them: a list of strings (others dropped), one string, or nothing readable. */
function readFlags(value: unknown): string[] | undefined {
  const list = typeof value === 'string' ? [value] : Array.isArray(value) ? value : undefined;
  if (!list) return undefined;
  return list
    .filter((flag): flag is string => typeof flag === 'string')
    .map((flag) => oneLine(flag, MAX_FLAG))
    .filter((flag) => flag !== '' && !/^(none|n\/a|no flags?)\.?$/i.test(flag))
    .slice(0, MAX_FLAGS);
}

/** The object of the answer: a fenced block's, else from the first `{` to the last `}` of the text. */
function firstObject(text: string): z.infer<typeof answerSchema> | undefined {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(text)?.[1];
  const candidates = [fenced, text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1)];
  for (const candidate of candidates) {
    const object = answerSchema.safeParse(candidate ? tryJson(candidate.trim()) : undefined);
    if (object.success && ('summary' in object.data || 'flags' in object.data)) return object.data;
  }
  return undefined;
}

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** One line, control characters removed, cut visibly at `max` characters. */
function oneLine(text: string, max: number): string {
  const line = text.replace(/[\p{Cc}\s]+/gu, ' ').trim();
  return line.length <= max ? line : `${line.slice(0, max - 1).trimEnd()}…`;
}
