import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { type ChatRequest, type ModelHandler, type ModelReply, reply } from '../support/fake-openai.js';
import { refuses } from '../support/fake-openai-dialects.js';

/**
 * Reads the recorded transcripts of real servers (format: README.md of the folder) and serves them from the
 * fake model server: turn k answers the request that already holds k assistant messages after the user's
 * message; a request the real server refuses gets its recorded refusal; a turn past the recording gets a
 * scripted answer, `DONE: <the tool outputs>`.
 */

const refusalSchema = z.object({ when: z.string(), status: z.number().int(), body: z.unknown() });
const turnSchema = z.union([
  z.object({ events: z.array(z.string()) }),
  z.object({ status: z.number().int(), body: z.unknown() }),
]);
const expectSchema = z.object({
  cards: z.number().int().min(0).optional(),
  ran: z.array(z.string()).optional(),
  final: z.string().optional(),
  failure: z.boolean().optional(),
});
const modeSchema = z.object({
  refuse: z.array(refusalSchema).optional(),
  turns: z.array(turnSchema).min(1),
  expect: expectSchema,
});
const transcriptSchema = z.object({
  name: z.string(),
  server: z.string(),
  refuse: z.array(refusalSchema).optional(),
  stream: modeSchema.optional(),
  json: modeSchema.optional(),
});

export type Transcript = z.infer<typeof transcriptSchema>;
export type Mode = 'stream' | 'json';
export type Expectation = z.infer<typeof expectSchema>;

/** Every transcript in `dir`, each checked against the format (a malformed one fails loudly). */
export function loadTranscripts(dir: string): Transcript[] {
  return readdirSync(dir)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => {
      const parsed = transcriptSchema.safeParse(JSON.parse(readFileSync(join(dir, file), 'utf8')));
      if (!parsed.success) throw new Error(`${file}: not a transcript: ${parsed.error.message}`);
      return parsed.data;
    });
}

const REFUSAL_RULES: Record<string, (request: ChatRequest) => boolean> = {
  'request-has-stream_options': refuses.streamOptions,
  'assistant-tool-calls-lack-reasoning_content': refuses.callsWithoutReasoning,
  'tool-calls-lack-thought_signature': refuses.callsWithoutSignature,
};

/** Assistant messages sent after the last user message: which turn of the recording answers. */
function turnIndex(request: ChatRequest): number {
  const lastUser = request.messages.findLastIndex((m) => m.role === 'user');
  return request.messages.slice(lastUser + 1).filter((m) => m.role === 'assistant').length;
}

function scripted(request: ChatRequest): ModelReply {
  const lastAssistant = request.messages.findLastIndex((m) => m.role === 'assistant');
  const outputs = request.messages
    .slice(lastAssistant + 1)
    .filter((m) => m.role === 'tool')
    .map((m) => String(m.content));
  return reply.text(`DONE: ${outputs.join(' | ')}`);
}

export function transcriptHandler(transcript: Transcript, mode: Mode): ModelHandler {
  const recorded = transcript[mode];
  if (!recorded) throw new Error(`${transcript.name} has no ${mode} recording`);
  const rules = [...(transcript.refuse ?? []), ...(recorded.refuse ?? [])];
  for (const rule of rules) {
    if (!REFUSAL_RULES[rule.when]) throw new Error(`${transcript.name}: unknown refusal rule "${rule.when}"`);
  }
  return (request) => {
    const refusal = rules.find((rule) => REFUSAL_RULES[rule.when]?.(request));
    if (refusal) return reply.raw(refusal.status, JSON.stringify(refusal.body));
    const turn = recorded.turns[turnIndex(request)];
    if (!turn) return scripted(request);
    if ('status' in turn) return reply.raw(turn.status, JSON.stringify(turn.body));
    if (request.stream !== true) {
      return reply.error(500, { error: { message: 'fake model: a streamed turn asked for without stream' } });
    }
    return reply.sse(turn.events);
  };
}
