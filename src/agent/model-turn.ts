import type { ConversationContext, FittedContext } from './conversation-context.js';
import {
  type ChatMessage,
  callIdsOf,
  type HistoryItem,
  historyToMessages,
  type StoredItem,
  type ToolCall,
  withUniqueCallIds,
} from './history.js';
import { type ChatModel, ModelError, type ModelResponse, type ToolSpec } from './model.js';
import type { RunRecord } from './ports.js';
import { modelCallScope } from './run-context.js';
import type { RunState } from './run-state.js';
import type { ToolRegistry } from './tool-registry.js';

/** Hooks that show the answer's text while the model streams it (never persisted). */
export interface TextStreamHooks {
  /** Answer text as the model streams it. */
  onTextDelta?: (text: string) => void;
  /** The text streamed since the model call (or its retry) began was cut off: it is no answer. */
  onTextCut?: (text: string) => void;
}

export interface ModelTurnDeps {
  model: ChatModel;
  tools: ToolRegistry;
  /** Keeps each request within the model's context (`MODEL_CONTEXT_TOKENS`); without it the whole history goes. */
  context?: ConversationContext;
}

/** What one model call adds to a run, not stored yet. */
export interface ModelTurn {
  response: ModelResponse;
  /** The state with this turn counted and its tokens added. */
  state: RunState;
  /** The model's message and its tool calls, as the history will hold them. */
  items: HistoryItem[];
  /** The tool calls, with ids unique in the conversation. */
  calls: ToolCall[];
}

/**
 * Calls the model once with the conversation's `history`, fitted to the model's context, and every tool's
 * schema. A server that refuses the request as longer than its context gets it once more, fitted tighter (its
 * older part summarised); any other failure, and a second refusal, is thrown as it came (a `ModelError` after the
 * client's own retries, or the abort of `signal`). A `nested` agent's call ids carry the run's turn, so they stay
 * unique in the run though its conversation is not the thread's.
 */
export async function takeModelTurn(
  deps: ModelTurnDeps,
  run: RunRecord,
  state: RunState,
  history: readonly StoredItem[],
  hooks: TextStreamHooks | undefined,
  signal: AbortSignal | undefined,
  nested = false,
): Promise<ModelTurn> {
  const turn = state.turn + 1;
  const scope = { runId: run.id, teamId: run.teamId, conversationId: run.conversationId, turn };
  const tools = toolSpecs(deps.tools);
  const ask = (messages: ChatMessage[]) =>
    deps.model.complete({
      messages,
      tools,
      ...(hooks?.onTextDelta ? { onTextDelta: hooks.onTextDelta } : {}),
      ...(hooks?.onTextCut ? { onTextCut: hooks.onTextCut } : {}),
      ...(signal ? { signal } : {}),
    });
  const { response, summaries } = await modelCallScope.run(scope, async () => {
    const { context } = deps;
    if (!context) return { response: await ask(historyToMessages(history)), summaries: NO_USAGE };
    const fitted = await context.fit(run, history, tools, signal);
    try {
      return { response: await ask(fitted.messages), summaries: fitted.usage };
    } catch (error) {
      if (!(error instanceof ModelError) || error.failure !== 'too_long') throw error;
      const again: FittedContext = await context.fit(run, fitted.history, tools, signal, error);
      // Nothing more could be summarised: the same request would be refused the same way.
      if (!again.compacted) throw error;
      return { response: await ask(again.messages), summaries: addUsage(fitted.usage, again.usage) };
    }
  });
  const items: HistoryItem[] = [];
  if (response.text || response.toolCalls.length === 0 || response.serverFields) {
    const text = response.text ?? '';
    const { serverFields } = response;
    items.push({ kind: 'assistant_message', data: serverFields ? { text, serverFields } : { text } });
  }
  const asked = nested
    ? response.toolCalls.map((call) => ({ ...call, callId: `${call.callId || 'call'}_t${turn}` }))
    : response.toolCalls;
  const calls = withUniqueCallIds(asked, callIdsOf(history), turn);
  for (const call of calls) items.push({ kind: 'tool_call', data: call });
  const usage = addUsage(addUsage(state.usage, summaries), response.usage);
  return { response, state: { ...state, turn, usage }, items, calls };
}

const NO_USAGE = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };

function toolSpecs(tools: ToolRegistry): ToolSpec[] {
  return tools
    .list()
    .map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.jsonSchema }));
}

function addUsage(a: RunState['usage'], b: RunState['usage']): RunState['usage'] {
  return {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    totalTokens: a.totalTokens + b.totalTokens,
  };
}
