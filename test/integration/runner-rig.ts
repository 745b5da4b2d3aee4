import type { ChatModel, ModelResponse } from '../../src/agent/model.js';
import type { RunStore } from '../../src/agent/ports.js';
import { initialRunState } from '../../src/agent/run-state.js';
import { Runner, type RunnerLimits } from '../../src/agent/runner.js';
import type { AgentTool } from '../../src/agent/tool.js';
import { ToolRegistry } from '../../src/agent/tool-registry.js';
import { type ApprovalPolicy, builtInPolicy } from '../../src/approvals/policy.js';
import type { MessageIntake } from '../../src/conversations/store-ports.js';
import type { StoreContext } from '../../src/db/store-context.js';
import type { Stores } from '../../src/db/stores.js';
import { randomId } from '../../src/ids.js';
import { silentLogger } from '../../src/logger.js';

/** What the runner tests on a real SQLite database share: a thread, a scripted model, a runner. */
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

/** One process's view of the database: its stores and the context (clock, lease owner) they were built from. */
export interface ProcessStores {
  stores: Stores;
  ctx: StoreContext;
}

/**
 * The real runner of the process `on` (its run store, standing approvals and clock), as `src/compose/core.ts` wires
 * it, with the given model, tools and policy.
 */
export function createTestRunner(
  on: ProcessStores,
  options: {
    model: ChatModel;
    tools: ToolRegistry | AgentTool[];
    policy?: ApprovalPolicy;
    limits?: RunnerLimits;
    store?: RunStore;
    /** Characters of a tool's output the model reads; default 16,000, as in production. */
    toolOutputMaxChars?: number;
  },
): Runner {
  return new Runner({
    model: options.model,
    tools: options.tools instanceof ToolRegistry ? options.tools : new ToolRegistry(options.tools),
    policy: options.policy ?? builtInPolicy(),
    store: options.store ?? on.stores.runs,
    standing: on.stores.standing,
    // Grantors keep their rights here; losing them is tested end to end (test/e2e/security/smaller-holes).
    grantors: { mayStillGrant: async () => true },
    clock: on.ctx.clock,
    newId: on.ctx.newId,
    logger: silentLogger,
    ...(options.limits ? { limits: options.limits } : {}),
    toolOutputMaxChars: options.toolOutputMaxChars ?? 16_000,
  });
}

/**
 * Starts a run in the conversation with `text` from `userId`, as a Slack message would; a started run is
 * leased to the process whose store `conversations` is.
 */
export async function startRun(
  conversations: MessageIntake,
  conversationId: string,
  text: string,
  userId = 'U1',
) {
  const runId = randomId('run');
  const started = await conversations.startRunOrQueue({
    conversationId,
    runId,
    message: { ...thread, userId, text, messageTs: String(Math.random()) },
    state: initialRunState(),
    audit: [],
  });
  return { runId, started };
}
