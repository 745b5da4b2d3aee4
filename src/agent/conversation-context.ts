import type { Logger } from '../logger.js';
import { SUMMARY_PROMPT, writeSummary } from './compaction.js';
import {
  type ContextSettings,
  type CountTokens,
  historyRoom,
  planContext,
  SUMMARY_SHARE,
  type TokenCounting,
} from './context-budget.js';
import {
  type ChatMessage,
  historyToMessages,
  type StoredItem,
  type SummaryItem,
  summaryNote,
} from './history.js';
import type { ChatModel, ModelError, ToolSpec } from './model.js';
import { leaseOf, type RunRecord, type TurnRecorder } from './ports.js';
import type { Usage } from './run-state.js';

export interface ConversationContextDeps {
  settings: ContextSettings;
  /** The instructions every request of the runner carries (its model client sends them as the system message). */
  instructions: string;
  tokens: TokenCounting;
  /** A model called without tools, whose client sends `SUMMARY_PROMPT` as the system message. */
  summarizer: ChatModel;
  store: Pick<TurnRecorder, 'saveSummary'>;
  logger: Logger;
}

/** The messages of one request, and what fitting them took. */
export interface FittedContext {
  messages: ChatMessage[];
  /** The history with the summary written for it, if one was. */
  history: readonly StoredItem[];
  /** What the summary calls used (zero when none was made). */
  usage: Usage;
  compacted: boolean;
}

/** After a refusal for length, the room is this share of what was thought to fit: the count fell short. */
const AFTER_REFUSAL = 0.75;
/** Tokens per word of a summary, roughly, to ask the model for a number of words. */
const TOKENS_PER_WORD = 1.4;

/**
 * Keeps each request of a conversation within the model's context: before each model call, the history is
 * fitted to the room the context leaves (less the answer's share, the instructions and the tools); the older
 * part that does not fit is replaced by a summary the model writes, stored as a history item of its own and
 * reused until it too must be summarised again. A server that refuses a request for its length says how long its
 * context is: that is remembered, for the life of the process, when shorter than the setting.
 */
export class ConversationContext {
  readonly #deps: ConversationContextDeps;
  #statedTokens: number | undefined;

  constructor(deps: ConversationContextDeps) {
    this.#deps = deps;
  }

  /** The messages to send for the run's next model call; `refused`: the last request was refused for its length. */
  async fit(
    run: RunRecord,
    history: readonly StoredItem[],
    tools: readonly ToolSpec[],
    signal: AbortSignal | undefined,
    refused?: ModelError,
  ): Promise<FittedContext> {
    const { settings, instructions, tokens, logger } = this.#deps;
    if (refused?.contextTokens !== undefined && refused.contextTokens < settings.contextTokens) {
      this.#statedTokens = Math.min(this.#statedTokens ?? refused.contextTokens, refused.contextTokens);
    }
    const effective: ContextSettings = {
      ...settings,
      contextTokens: Math.min(settings.contextTokens, this.#statedTokens ?? settings.contextTokens),
    };
    const none: Usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
    const roomBy = (by: CountTokens) => {
      const full = historyRoom(effective, { instructions, tools }, by);
      return refused ? Math.floor(full * AFTER_REFUSAL) : full;
    };
    // Most conversations are far from the limit: their length alone shows it, without counting.
    const rough = planContext(history, run.id, roomBy(tokens.bound), tokens.bound);
    if (rough.kind === 'fits' && !refused) {
      return { messages: rough.messages, history, usage: none, compacted: false };
    }
    const count = await tokens.counter();
    const room = roomBy(count);
    const plan = planContext(history, run.id, room, count);
    if (plan.kind === 'fits') return { messages: plan.messages, history, usage: none, compacted: false };
    const first = plan.summarise[0];
    const last = plan.summarise.at(-1);
    if (!first || !last) {
      const note = plan.previous ? [summaryNote(plan.previous)] : [];
      return { messages: [...note, ...historyToMessages(plan.keep)], history, usage: none, compacted: false };
    }
    const written = await writeSummary(
      this.#deps.summarizer,
      {
        previous: plan.previous,
        items: plan.summarise,
        wordLimit: Math.max(50, Math.floor((room * SUMMARY_SHARE) / TOKENS_PER_WORD)),
      },
      count,
      historyRoom(effective, { instructions: SUMMARY_PROMPT, tools: [] }, count),
      signal,
    );
    const { promptTokens, completionTokens } = written.usage;
    const summary: SummaryItem = {
      kind: 'summary',
      data: {
        text: written.text,
        fromSeq: plan.previous?.fromSeq ?? first.seq,
        throughSeq: last.seq,
        usage: { promptTokens, completionTokens },
      },
    };
    await this.#deps.store.saveSummary(leaseOf(run), summary);
    logger.info('the older part of a conversation was summarised to fit the model context', {
      runId: run.id,
      conversationId: run.conversationId,
      summarisedItems: plan.summarise.length,
      keptItems: plan.keep.length,
      room,
      afterRefusal: refused !== undefined,
    });
    return {
      messages: [summaryNote(summary.data), ...historyToMessages(plan.keep)],
      history: [...history, { ...summary, seq: Number.MAX_SAFE_INTEGER, runId: run.id, turn: null }],
      usage: written.usage,
      compacted: true,
    };
  }
}
