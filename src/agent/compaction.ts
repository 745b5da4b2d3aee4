import { AppError } from '../errors.js';
import type { CountTokens } from './context-budget.js';
import type { HistoryItem, StoredItem, SummaryData } from './history.js';
import { type ChatModel, ModelError } from './model.js';
import type { Usage } from './run-state.js';

/** What the summarising model is told it is (its client sends it as the system message). */
export const SUMMARY_PROMPT = [
  'You keep the memory of a long conversation between people in a Slack thread and an AI assistant that uses tools.',
  'You write a summary that will replace the older part of the conversation: the assistant will read only your summary and the recent messages.',
].join(' ');

/** What each summary request asks, before the conversation it is given. */
const INSTRUCTIONS = [
  'Write a concise summary of the conversation below, merged with your summary so far when there is one.',
  'Keep every fact, name, number, identifier, date, decision and commitment, who asked for what, what each tool call did and what it returned (in short), and every open question or task still to do.',
  'Drop greetings, repetition and reasoning that led nowhere. Write plain sentences or short bullet points, in the language of the conversation, without any preamble.',
].join(' ');

/** The most a single message of the conversation may take of a summary request (the rest of it is cut). */
const LINE_SHARE = 0.5;

/** One summary written: its text and what the calls that wrote it used. */
export interface WrittenSummary {
  text: string;
  usage: Usage;
}

/**
 * Writes the summary that replaces the older part of a conversation: a model call without tools, asked to keep
 * facts, names, decisions and open questions. The conversation is given as a transcript in one message, in as
 * many requests as it takes for each to fit in `room` tokens, each folding the next part into the summary so far.
 */
export async function writeSummary(
  model: ChatModel,
  input: { previous: SummaryData | undefined; items: readonly StoredItem[]; wordLimit: number },
  count: CountTokens,
  room: number,
  signal: AbortSignal | undefined,
): Promise<WrittenSummary> {
  const usage: Usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
  let summary = input.previous?.text;
  const ask = async (lines: string[]) => {
    const response = await model.complete({
      messages: [{ role: 'user', content: requestText(summary, lines, input.wordLimit) }],
      tools: [],
      ...(signal ? { signal } : {}),
    });
    usage.promptTokens += response.usage.promptTokens;
    usage.completionTokens += response.usage.completionTokens;
    usage.totalTokens += response.usage.totalTokens;
    const text = response.text?.trim();
    if (!text) throw new ModelError('bad_response', 'The model wrote an empty summary');
    summary = text;
  };
  const lineLimit = Math.max(1, Math.floor(room * LINE_SHARE));
  let chunk: string[] = [];
  let chunkTokens = 0;
  for (const line of input.items.flatMap(transcriptLines)) {
    const cut = cutToTokens(line, lineLimit, count);
    const tokens = count(cut) + 1;
    const base = count(requestText(summary, [], input.wordLimit));
    if (chunk.length > 0 && base + chunkTokens + tokens > room) {
      await ask(chunk);
      chunk = [];
      chunkTokens = 0;
    }
    chunk.push(cut);
    chunkTokens += tokens;
  }
  if (chunk.length > 0 || summary === undefined) await ask(chunk);
  if (summary === undefined) throw new AppError('model.bad_response', 'No summary was written');
  return { text: summary, usage };
}

function requestText(summary: string | undefined, lines: readonly string[], wordLimit: number): string {
  return [
    `${INSTRUCTIONS} Use at most ${wordLimit} words.`,
    summary === undefined ? 'There is no summary so far.' : `Your summary so far:\n${summary}`,
    `The conversation to add to it, oldest first:\n${lines.join('\n')}`,
  ].join('\n\n');
}

/** One item as lines of a transcript, each saying who wrote it. */
function transcriptLines(item: HistoryItem): string[] {
  switch (item.kind) {
    case 'user_message':
      return [`<@${item.data.userId}>: ${item.data.text}`];
    case 'thread_context':
      return item.data.messages.map((m) => `${m.author} (before you were mentioned): ${m.text}`);
    case 'assistant_message':
      return item.data.text ? [`assistant: ${item.data.text}`] : [];
    case 'tool_call':
      return [`assistant called the tool ${item.data.name} with ${item.data.arguments}`];
    case 'tool_output':
      return [`the tool ${item.data.name} (${item.data.status}) returned: ${item.data.output}`];
    case 'summary':
      return [];
  }
}

/** `text` cut to at most `limit` tokens, marked as cut. */
function cutToTokens(text: string, limit: number, count: CountTokens): string {
  let tokens = count(text);
  let kept = text;
  while (tokens > limit && kept.length > 0) {
    kept = kept.slice(0, Math.floor((kept.length * limit * 0.9) / tokens));
    tokens = count(kept) + 3;
  }
  return kept === text ? text : `${kept}… (cut)`;
}
