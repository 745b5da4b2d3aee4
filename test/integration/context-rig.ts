import { z } from 'zod';
import { SUMMARY_PROMPT } from '../../src/agent/compaction.js';
import type { ContextSettings } from '../../src/agent/context-budget.js';
import { ConversationContext } from '../../src/agent/conversation-context.js';
import type { ChatModel } from '../../src/agent/model.js';
import { parseRunState } from '../../src/agent/run-state.js';
import { Runner } from '../../src/agent/runner.js';
import { defineTool } from '../../src/agent/tool.js';
import { ToolRegistry } from '../../src/agent/tool-registry.js';
import { builtInPolicy } from '../../src/approvals/policy.js';
import { silentLogger } from '../../src/logger.js';
import { createOpenAIModel } from '../../src/model/openai/openai-client.js';
import { createTokenCounter } from '../../src/model/token-counter.js';
import type { ChatRequest, ChatRequestMessage, FakeOpenAI, ModelReply } from '../support/fake-openai.js';
import { reply } from '../support/fake-openai.js';
import type { TestStores } from '../support/test-database.js';

/** The instructions of the bot in these tests: about as long as a real system prompt. */
export const INSTRUCTIONS = [
  'You are a helpful assistant in a Slack workspace. Answer briefly and precisely.',
  'Use the tools when a question needs data you do not have; some tools wait for a person to approve them.',
  'Never invent facts: when you do not know, say so.',
].join(' ');

/** A tool that runs at once and returns a few hundred characters, as a lookup would. */
export const lookupTool = defineTool({
  name: 'lookup_order',
  description: 'Looks an order up by its number and returns its status, customer and items.',
  parameters: z.object({ order: z.number().int() }),
  needsApproval: false,
  execute: async ({ order }) =>
    `Order ${order}: shipped on 2026-03-0${order % 9} to ACME Ltd, 3 items (bolts, nuts, washers), invoice INV-${order}-77, paid in full; carrier tracking 1Z${order}X99; no open claims.`,
});

const text = (message: ChatRequestMessage | undefined): string =>
  typeof message?.content === 'string' ? message.content : '';

/** Whether a request is a summary request: no tools, the summary instructions as its system message. */
export const isSummaryRequest = (request: ChatRequest): boolean =>
  !request.tools && text(request.messages[0]).startsWith(SUMMARY_PROMPT);

/**
 * A model that behaves enough like a real one: it summarises by keeping every line that states a FACT (from its
 * summary so far and from the conversation), looks orders up when asked, answers what the codename is from
 * whatever it was sent, and otherwise acknowledges at some length.
 */
export function scriptedModel(request: ChatRequest): ModelReply {
  if (isSummaryRequest(request)) {
    const facts = new Set(
      text(request.messages.at(-1))
        .split('\n')
        .flatMap((line) => [...line.matchAll(/FACT: [^.]*\./g)].map((match) => match[0])),
    );
    return reply.text(`The conversation so far: ${[...facts].join(' ')} Many routine messages followed.`);
  }
  const last = request.messages.at(-1);
  if (last?.role === 'tool') return reply.text('I looked the order up; it has shipped.');
  const asked = text(last);
  const order = /^lookup order (\d+)/.exec(asked);
  if (order) return reply.toolCalls([{ name: 'lookup_order', arguments: { order: Number(order[1]) } }]);
  if (asked.startsWith('What is the codename?')) {
    const all = request.messages.map(text).join('\n');
    const codename = /codename is ([A-Z]+)/.exec(all)?.[1];
    return reply.text(codename ? `The codename is ${codename}.` : 'I do not know the codename.');
  }
  return reply.text(
    `Noted (${asked.slice(0, 20)}). I keep this in mind with the rest of the thread, and I will come back to it when it matters for what you ask next.`,
  );
}

/** A runner as the bot wires it, with the real client talking to `model` and the real token counter. */
export function contextRunner(
  on: Pick<TestStores, 'stores' | 'ctx'>,
  model: FakeOpenAI,
  settings: ContextSettings,
  observeSummaries: (summarizer: ChatModel) => ChatModel = (summarizer) => summarizer,
): { runner: Runner; context: ConversationContext } {
  const client = (systemPrompt: string, stream: boolean) =>
    createOpenAIModel({
      apiKey: 'sk-test',
      baseURL: model.baseURL,
      model: 'gpt-4o-mini',
      maxRetries: 0,
      systemPrompt,
      stream,
    });
  const context = new ConversationContext({
    settings,
    instructions: INSTRUCTIONS,
    tokens: createTokenCounter('gpt-4o-mini'),
    summarizer: observeSummaries(client(SUMMARY_PROMPT, false)),
    store: on.stores.runs,
    logger: silentLogger,
  });
  const runner = new Runner({
    model: client(INSTRUCTIONS, false),
    tools: new ToolRegistry([lookupTool]),
    policy: builtInPolicy(),
    store: on.stores.runs,
    standing: on.stores.standing,
    grantors: { mayStillGrant: async () => true },
    clock: on.ctx.clock,
    newId: on.ctx.newId,
    logger: silentLogger,
    context,
    toolOutputMaxChars: 16_000,
  });
  return { runner, context };
}

/** The tokens the run's state says its model calls used (its turns and any summary written for them). */
export async function promptTokensOf(on: TestStores, runId: string): Promise<number> {
  const run = await on.stores.runs.getRun(runId);
  const parsed = parseRunState(run?.state ?? '');
  if (!parsed.ok) throw new Error(`run ${runId} has no readable state`);
  return parsed.state.usage.promptTokens;
}

/** Every tool call of a request has its output after it, and no output comes without its call. */
export function callsPaired(request: ChatRequest): boolean {
  const open = new Set<string>();
  for (const message of request.messages) {
    if (message.role === 'tool') {
      if (!open.delete(message.tool_call_id ?? '')) return false;
    } else if (open.size > 0) return false;
    for (const call of message.tool_calls ?? []) open.add(call.id);
  }
  return open.size === 0;
}
