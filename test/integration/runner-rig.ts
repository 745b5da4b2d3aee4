import type { ChatModel, ModelResponse } from '../../src/agent/model.js';
import type { RunStore } from '../../src/agent/ports.js';
import { initialRunState } from '../../src/agent/run-state.js';
import { Runner, type RunnerLimits } from '../../src/agent/runner.js';
import type { AgentTool } from '../../src/agent/tool.js';
import { ToolRegistry } from '../../src/agent/tool-registry.js';
import { type ApprovalPolicy, builtInPolicy } from '../../src/approvals/policy.js';
import type { ConversationStore } from '../../src/conversations/ports.js';
import type { Db } from '../../src/db/database.js';
import { createRunStore } from '../../src/db/run-store.js';
import { randomId } from '../../src/ids.js';
import { silentLogger } from '../../src/logger.js';

/** What the runner tests on a real SQLite database share: a clock, a thread, a scripted model, a runner. */
export const clock = { now: () => Date.now() };
export const thread = { teamId: 'T1', channelId: 'C1', threadTs: '1.0' };
export const usage = { promptTokens: 1, completionTokens: 1, totalTokens: 2 };

/** A model that answers with `responses` in order and counts its calls; it throws when they run out. */
export function scripted(responses: ModelResponse[]): ChatModel & { calls: number } {
  const model = {
    calls: 0,
    async complete() {
      const next = responses[model.calls];
      model.calls += 1;
      if (!next) throw new Error('no scripted response');
      return next;
    },
  };
  return model;
}

/** A model response asking for the calls `[callId, tool, arguments]`. */
export const calls = (...list: [string, string, string][]): ModelResponse => ({
  text: null,
  toolCalls: list.map(([callId, name, args]) => ({ callId, name, arguments: args })),
  usage,
});

export const answer = (text: string): ModelResponse => ({ text, toolCalls: [], usage });

/** The real runner on `db`, as `src/bot.ts` wires it, with the given model, tools and policy. */
export function createTestRunner(
  db: Db,
  options: {
    model: ChatModel;
    tools: ToolRegistry | AgentTool[];
    policy?: ApprovalPolicy;
    limits?: RunnerLimits;
    store?: RunStore;
  },
): Runner {
  return new Runner({
    model: options.model,
    tools: options.tools instanceof ToolRegistry ? options.tools : new ToolRegistry(options.tools),
    policy: options.policy ?? builtInPolicy(),
    store: options.store ?? createRunStore(db, clock),
    clock,
    newId: randomId,
    logger: silentLogger,
    ...(options.limits ? { limits: options.limits } : {}),
  });
}

/** Starts a run in the conversation with `text` from `userId`, as a Slack message would. */
export function startRun(
  conversations: ConversationStore,
  conversationId: string,
  text: string,
  userId = 'U1',
) {
  const runId = randomId('run');
  const started = conversations.startRunOrQueue({
    conversationId,
    runId,
    message: { ...thread, userId, text, messageTs: String(Math.random()) },
    state: initialRunState(),
    audit: [],
  });
  return { runId, started };
}
