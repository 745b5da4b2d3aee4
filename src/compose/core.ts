import { threadId } from 'node:worker_threads';
import { AgentCatalog } from '../agent/agent-tools.js';
import { loadAgents } from '../agent/agents-file.js';
import { CallReviewer, REVIEWER_PROMPT } from '../agent/call-reviewer.js';
import { SUMMARY_PROMPT } from '../agent/compaction.js';
import { ConversationContext } from '../agent/conversation-context.js';
import type { ChatModel } from '../agent/model.js';
import { DEFAULT_LIMITS, Runner, type RunnerLimits } from '../agent/runner.js';
import type { AgentTool } from '../agent/tool.js';
import { ToolRegistry } from '../agent/tool-registry.js';
import { ApprovalService } from '../approvals/approval-service.js';
import { ArgumentEditService } from '../approvals/argument-edit-service.js';
import { Deciders } from '../approvals/deciders.js';
import type { ApprovalPolicy } from '../approvals/policy.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { ConversationService } from '../conversations/conversation-service.js';
import { DecisionFollowUp } from '../conversations/decision-follow-up.js';
import { LandedCardUpdates } from '../conversations/landed-card-updates.js';
import type { SurfaceAdapters } from '../conversations/surface-ports.js';
import { tapAuditEvents } from '../db/audit-tap.js';
import { openDatabase } from '../db/open-database.js';
import type { SqlDatabase } from '../db/sql/sql-database.js';
import { createStores, type Stores } from '../db/stores.js';
import { createTelemetryLookups } from '../db/telemetry-queries.js';
import { type IdGenerator, randomId } from '../ids.js';
import type { Logger } from '../logger.js';
import { loadMcpServers } from '../mcp/load-mcp-servers.js';
import { McpServers } from '../mcp/mcp-servers.js';
import type { OpenAIModelOptions } from '../model/openai/openai-client.js';
import { createTokenCounter } from '../model/token-counter.js';
import { ownerIsGone, processOwnerId } from '../process-identity.js';
import { createBuiltInTools, toolNames } from '../tools/built-in-tools.js';
import { adminsOf } from './installations.js';

/** What tests and the bench may replace; production uses none of these. */
export interface CoreOverrides {
  model?: ChatModel;
  clock?: Clock;
  newId?: IdGenerator;
  limits?: RunnerLimits;
  /** The tools to register, given the built-in ones (tests add a failing tool or retire one). */
  tools?: (builtIn: AgentTool[]) => AgentTool[];
  /** How often cards and replies Slack did not accept are tried again; default 30 s. */
  deliveryRetryMs?: number;
  /** How often a run's driver looks for a stop recorded by another process; default 1 s. */
  stopPollMs?: number;
  /** The lease owner: a worker thread drives runs under its process's claims, so it takes the process's id. */
  owner?: string;
  /** How long the reviewer's note may take before the card is posted without it; default 5 s. */
  reviewTimeoutMs?: number;
  /** Wraps the stores (tests make the database fail for some writes). */
  stores?: (stores: Stores) => Stores;
}

/** The core of the product on its database: stores, model, policy, tools and the services built on them. */
export interface Core<A extends SurfaceAdapters = SurfaceAdapters> {
  /** The surface's adapters, as built for these stores. */
  adapters: A;
  database: SqlDatabase;
  stores: Stores;
  policy: ApprovalPolicy;
  tools: ToolRegistry;
  mcp: McpServers;
  conversations: ConversationService;
  approvals: ApprovalService;
  /** Who may see, decide and be told about requests: what every surface asks. */
  deciders: Deciders;
  edits: ArgumentEditService;
  /** What follows any change to a request, wherever it was made. */
  followUp: DecisionFollowUp;
  clock: Clock;
  /** This process, as written in the leases it holds. */
  owner: string;
}

/**
 * The Chat Completions model, its client loaded at the first call: with worker threads, the thread that receives
 * Slack's requests never calls the model, so it does not carry the client's code.
 */
function openAIModel(options: OpenAIModelOptions): ChatModel {
  let model: Promise<ChatModel> | undefined;
  return {
    async complete(request) {
      model ??= import('../model/openai/openai-client.js').then((client) =>
        client.createOpenAIModel(options),
      );
      return (await model).complete(request);
    },
  };
}

/**
 * The reviewer (APPROVAL_REVIEW): the same OpenAI-compatible client with its own model and instructions, no
 * tools, no streaming and no retries (its answer is only worth having within its bound).
 */
function reviewerOf(
  config: Config,
  logger: Logger,
  clock: Clock,
  timeoutMs: number | undefined,
  measured: (model: ChatModel) => ChatModel,
): { reviewer?: CallReviewer } {
  if (!config.review) return {};
  const model = openAIModel({
    ...config.openai,
    model: config.review.model,
    stream: false,
    maxRetries: 0,
    systemPrompt: REVIEWER_PROMPT,
    logger,
  });
  return {
    reviewer: new CallReviewer({
      model: measured(model),
      clock,
      logger,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
    }),
  };
}

/**
 * Opens the database and builds the core on it: one store of each kind, the model, the tools (built-in and
 * MCP), the runner and the conversation, approval and follow-up services. Shared by the Slack bot and the
 * terminal chat, which differ only in their surface (built by `adaptersFor`, as it renders from the stores).
 */
export async function createCore<A extends SurfaceAdapters>(
  config: Config,
  logger: Logger,
  policy: ApprovalPolicy,
  adaptersFor: (stores: Stores) => A,
  overrides: CoreOverrides = {},
): Promise<Core<A>> {
  const clock = overrides.clock ?? { now: () => Date.now() };
  const newId = overrides.newId ?? randomId;
  const mcpServers = loadMcpServers(config.mcpServersFile);
  const agents = new AgentCatalog(
    loadAgents(config.agentsFile, {
      builtIn: toolNames(),
      mcpServers: mcpServers.map((server) => server.name),
    }),
  );
  const owner = overrides.owner ?? processOwnerId();
  const opened = await openDatabase(config.database, logger);
  // Only with an OTEL_ endpoint is the OpenTelemetry SDK even loaded.
  const telemetry = config.telemetry
    ? (await import('../telemetry/otel.js')).startOtel({
        config: config.telemetry,
        instanceId: `${owner}:${threadId}`,
        modelName: config.openai.model,
        lookups: createTelemetryLookups(opened),
        logger,
      })
    : undefined;
  const database = telemetry
    ? tapAuditEvents(
        opened,
        (events) => telemetry.committed(events),
        () => telemetry.shutdown(),
      )
    : opened;
  const created = createStores({
    db: database,
    clock,
    newId,
    owner,
    leaseMs: config.runLeaseMs,
    ownerIsGone: (other) => ownerIsGone(other, owner),
  });
  const stores = overrides.stores ? overrides.stores(created) : created;
  const deliveryRetryMs = overrides.deliveryRetryMs ?? 30_000;
  const adapters = adaptersFor(stores);
  const measured = (model: ChatModel) => (telemetry ? telemetry.model(model) : model);
  const builtIn = createBuiltInTools({
    clock,
    notes: stores.notes,
    poster: adapters.surface,
    // Read at each post: a policy reloaded on SIGHUP applies to the next message.
    postMessageLinkPreviews: () => policy.postMessageLinkPreviews,
  });
  const tools = new ToolRegistry([
    ...(overrides.tools ? overrides.tools(builtIn) : builtIn),
    // Each agent of the agents file is a tool of the bot's own agent (and of the agents that list it).
    ...agents.tools(),
  ]);
  const deciders = new Deciders({
    clock,
    admins: adminsOf(config, stores),
    auditorUserIds: config.auditorUserIds,
    groups: adapters.groups,
    delegations: stores.delegations,
    votes: stores.approvals,
  });
  const { organisations } = adapters;
  const approvals = new ApprovalService({ store: stores.approvals, clock, deciders, organisations });
  const runner = new Runner({
    model: measured(
      overrides.model ?? openAIModel({ ...config.openai, systemPrompt: adapters.systemPrompt, logger }),
    ),
    tools,
    policy,
    store: stores.runs,
    standing: stores.standing,
    grantors: deciders,
    clock,
    newId,
    logger,
    limits: overrides.limits ?? DEFAULT_LIMITS,
    toolOutputMaxChars: config.toolOutputMaxChars,
    agents,
    ...reviewerOf(config, logger, clock, overrides.reviewTimeoutMs, measured),
    context: new ConversationContext({
      settings: config.modelContext,
      instructions: adapters.systemPrompt,
      tokens: createTokenCounter(config.openai.model),
      // The same model, asked without tools and without streaming, with its own instructions.
      summarizer: measured(
        openAIModel({ ...config.openai, stream: false, systemPrompt: SUMMARY_PROMPT, logger }),
      ),
      store: stores.runs,
      logger,
    }),
  });
  // One for this thread: what the decisions' follow-up and the thread deliveries updated, written off together.
  const landedCardUpdates = new LandedCardUpdates(stores.deliveries, logger);
  const conversations = new ConversationService({
    store: stores.conversations,
    outbox: stores.deliveries,
    landedCardUpdates,
    recovery: stores.recovery,
    runs: stores.runs,
    runner,
    surface: adapters.surface,
    surfaceKind: adapters.surfaceKind,
    clock,
    newId,
    logger,
    leaseMs: config.runLeaseMs,
    maxActiveRuns: config.maxActiveRuns,
    deliveryRetryMs,
    threadContextMessages: config.threadContextMessages,
    streamTasks: config.openai.stream,
    channelMembers: adapters.channelMembers,
    ...(overrides.stopPollMs === undefined ? {} : { stopPollMs: overrides.stopPollMs }),
  });
  return {
    adapters,
    database,
    stores,
    policy,
    tools,
    mcp: new McpServers({ servers: mcpServers, registry: tools, logger }),
    conversations,
    approvals,
    deciders,
    edits: new ArgumentEditService({ tools, approvals, store: stores.approvals, deciders, organisations }),
    followUp: new DecisionFollowUp({
      surface: adapters.decisionSurface ?? adapters.surface,
      conversations,
      outbox: stores.deliveries,
      landed: landedCardUpdates,
      clock,
      logger,
      retryMs: deliveryRetryMs,
    }),
    clock,
    owner,
  };
}
