import {
  type ChatMessage,
  historyToMessages,
  type StoredItem,
  type SummaryData,
  summaryNote,
} from './history.js';
import type { ToolSpec } from './model.js';

/** The tokens of a text, as the model's tokenizer counts them (or more). */
export type CountTokens = (text: string) => number;

/** Where token counts come from (an adapter: the tokenizer library is loaded at the first count). */
export interface TokenCounting {
  counter(): Promise<CountTokens>;
  /**
   * A count never below `counter()`'s, made without the tokenizer (from the text's length): a conversation that
   * fits by this count fits, and the tokenizer need not even be loaded.
   */
  readonly bound: CountTokens;
}

/** The model's context (MODEL_CONTEXT_TOKENS) and the share of it kept free for the answer. */
export interface ContextSettings {
  contextTokens: number;
  /** Percent of `contextTokens` never filled by the request, so that the answer has room. */
  answerPercent: number;
}

/** What a message costs beyond its text: its role and the separators of the server's chat template. */
const MESSAGE_OVERHEAD = 4;
/** What a request costs beyond its messages (the priming of the answer). */
const REQUEST_OVERHEAD = 3;
/** The share of the room for history that the items kept after a compaction may fill, at most. */
export const KEPT_SHARE = 0.5;
/** The share of the room for history a summary should fill, at most (the model is asked for fewer words). */
export const SUMMARY_SHARE = 0.2;

/** The tokens of one message as the server counts them, or a few more. */
export function messageTokens(message: ChatMessage, count: CountTokens): number {
  switch (message.role) {
    case 'system':
    case 'user':
      return MESSAGE_OVERHEAD + count(message.content);
    case 'tool':
      return MESSAGE_OVERHEAD + count(message.callId) + count(message.content);
    case 'assistant': {
      let tokens = MESSAGE_OVERHEAD + count(message.content ?? '');
      for (const call of message.toolCalls) {
        tokens += MESSAGE_OVERHEAD + count(call.callId) + count(call.name) + count(call.arguments);
        if (call.serverFields) tokens += count(JSON.stringify(call.serverFields));
      }
      if (message.serverFields) tokens += count(JSON.stringify(message.serverFields));
      return tokens;
    }
  }
}

/**
 * The tokens the history may fill: the context less the answer's share, the instructions and the tools' schemas,
 * which every request carries whatever the conversation holds.
 */
export function historyRoom(
  settings: ContextSettings,
  fixed: { instructions: string; tools: readonly ToolSpec[] },
  count: CountTokens,
): number {
  const request = Math.floor((settings.contextTokens * (100 - settings.answerPercent)) / 100);
  const tools = fixed.tools.length > 0 ? count(JSON.stringify(fixed.tools)) : 0;
  return request - REQUEST_OVERHEAD - MESSAGE_OVERHEAD - count(fixed.instructions) - tools;
}

/**
 * The conversation cut where it may be cut: a user message, earlier thread messages, or one model turn (its
 * message, its tool calls and all their outputs, which share a run and a turn). A cut between units never
 * separates a call from its output, which servers refuse.
 */
export function unitsOf(items: readonly StoredItem[]): StoredItem[][] {
  const units: StoredItem[][] = [];
  let key: string | undefined;
  for (const item of items) {
    if (item.kind === 'summary') continue;
    const starts = item.kind === 'user_message' || item.kind === 'thread_context';
    const itemKey = starts ? undefined : `${item.runId}:${item.turn}`;
    const last = units.at(-1);
    if (last && !starts && itemKey === key) last.push(item);
    else units.push([item]);
    key = itemKey;
  }
  return units;
}

/** The summary that stands for the most of the conversation, if any was written. */
export function latestSummary(history: readonly StoredItem[]): SummaryData | undefined {
  let latest: SummaryData | undefined;
  for (const item of history) {
    if (item.kind === 'summary' && (!latest || item.data.throughSeq > latest.throughSeq)) latest = item.data;
  }
  return latest;
}

/** What to send: the history fits (with its summary), or older items must be summarised first. */
export type ContextPlan =
  | { kind: 'fits'; messages: ChatMessage[]; tokens: number }
  | {
      kind: 'compact';
      /** The summary written so far, which the new one takes in. */
      previous: SummaryData | undefined;
      /** The items the new summary stands for, in order (whole units). */
      summarise: StoredItem[];
      /** The items sent whole after it: the run's own, and the most recent ones that fit beside them. */
      keep: StoredItem[];
    };

/**
 * Fits a conversation's history into `room` tokens. What a summary covers is replaced by its note. When the rest
 * does not fit, the oldest units are to be summarised, keeping whole the run's own items (its user message, its
 * calls and their outputs, which includes any call waiting for a decision) and, beside them, the most recent
 * units that fill at most `KEPT_SHARE` of the room, so the next compaction is many turns away.
 */
export function planContext(
  history: readonly StoredItem[],
  runId: string,
  room: number,
  count: CountTokens,
): ContextPlan {
  const previous = latestSummary(history);
  const visible = history.filter(
    (item) => item.kind !== 'summary' && (!previous || item.seq > previous.throughSeq),
  );
  const messages = [...(previous ? [summaryNote(previous)] : []), ...historyToMessages(visible)];
  const unitTokens = (unit: readonly StoredItem[]) =>
    historyToMessages(unit).reduce((sum, message) => sum + messageTokens(message, count), 0);
  const units = unitsOf(visible);
  const costs = units.map(unitTokens);
  const summaryTokens = previous ? messageTokens(messages[0] as ChatMessage, count) : 0;
  const tokens = summaryTokens + costs.reduce((sum, cost) => sum + cost, 0);
  const firstOfRun = units.findIndex((unit) => unit.some((item) => item.runId === runId));
  const runStart = firstOfRun === -1 ? units.length : firstOfRun;
  if (tokens <= room || runStart === 0) return { kind: 'fits', messages, tokens };
  let start = runStart;
  let kept = costs.slice(runStart).reduce((sum, cost) => sum + cost, 0);
  while (start > 0 && kept + (costs[start - 1] ?? 0) <= room * KEPT_SHARE) {
    start -= 1;
    kept += costs[start] ?? 0;
  }
  // Nothing older than the run may be left out of the summary and still be sent: the cut keeps what it can.
  if (start === 0) return { kind: 'fits', messages, tokens };
  return {
    kind: 'compact',
    previous,
    summarise: units.slice(0, start).flat(),
    keep: units.slice(start).flat(),
  };
}
