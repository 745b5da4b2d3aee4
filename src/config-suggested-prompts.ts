import { z } from 'zod';

/** One prompt of the Messages tab: its button's title, and the message sent when it is clicked. */
export interface SuggestedPrompt {
  title: string;
  message: string;
}

/** Shown in the Messages tab when `SUGGESTED_PROMPTS` is not set: one per kind of thing the tools do. */
export const DEFAULT_SUGGESTED_PROMPTS: readonly SuggestedPrompt[] = [
  { title: 'What can you do?', message: 'What can you do, and which of your actions need an approval?' },
  { title: 'Time around the world', message: 'What time is it now in Tokyo, London and New York?' },
  { title: 'Our notes', message: 'Which notes do we have?' },
  { title: 'Add a note', message: 'Add a note saying: team lunch on Friday at noon.' },
];

/** Slack shows at most four prompts; titles and messages are kept short enough for its buttons. */
const suggestedPromptsSchema = z
  .array(z.object({ title: z.string().trim().min(1).max(75), message: z.string().trim().min(1).max(2000) }))
  .max(4, 'Slack shows at most 4 suggested prompts');

/** Parses the JSON of `SUGGESTED_PROMPTS`; an error message says what to fix. */
export function parseSuggestedPrompts(
  raw: string,
): { ok: true; prompts: SuggestedPrompt[] } | { ok: false; error: string } {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return {
      ok: false,
      error: 'must be JSON such as [{"title":"Our notes","message":"Which notes do we have?"}]',
    };
  }
  const parsed = suggestedPromptsSchema.safeParse(json);
  if (!parsed.success) return { ok: false, error: parsed.error.issues[0]?.message ?? 'invalid prompts' };
  return { ok: true, prompts: parsed.data };
}
