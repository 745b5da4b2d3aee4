import type { webApi } from '@slack/bolt';
import type { ChatModel } from './agent/model.js';
import { createOpenAIModel } from './agent/openai-client.js';
import type { Clock, IdGenerator } from './agent/ports.js';
import { DEFAULT_LIMITS, Runner, type RunnerLimits } from './agent/runner.js';
import type { AgentTool } from './agent/tool.js';
import { ToolRegistry } from './agent/tool-registry.js';
import { ApprovalScheduler, DEFAULT_SCHEDULER_INTERVAL_MS } from './approvals/approval-scheduler.js';
import { ApprovalService } from './approvals/approval-service.js';
import { ArgumentEditService } from './approvals/argument-edit-service.js';
import type { ApprovalPolicy } from './approvals/policy.js';
import { loadApprovalPolicy } from './approvals/policy-file.js';
import { auditEvent } from './audit/audit-event.js';
import { isTerminalThread, TERMINAL_TEAM_ID } from './cli/terminal-thread.js';
import type { Config } from './config.js';
import { ConversationService } from './conversations/conversation-service.js';
import type { ThreadRef } from './conversations/ports.js';
import { WelcomeService } from './conversations/welcome-service.js';
import { createApprovalCardStore } from './db/approval-card-store.js';
import { createApprovalStore } from './db/approval-store.js';
import { createApprovalTimerStore } from './db/approval-timer-store.js';
import { createAuditQueryStore } from './db/audit-query-store.js';
import { createConversationStore } from './db/conversation-store.js';
import { openDatabase } from './db/database.js';
import { createDedupeStore } from './db/dedupe-store.js';
import { createGreetingStore } from './db/greeting-store.js';
import { createNotesStore } from './db/notes-store.js';
import { createRunStore } from './db/run-store.js';
import { createStandingApprovals } from './db/standing-approvals.js';
import { AppError, describeError } from './errors.js';
import { randomId } from './ids.js';
import type { Logger } from './logger.js';
import { loadMcpServers } from './mcp/load-mcp-servers.js';
import { McpServers } from './mcp/mcp-servers.js';
import { createSlackApp } from './slack/app.js';
import { createApprovalNotifier } from './slack/approval-notifier.js';
import { createUserGroupDirectory } from './slack/user-groups.js';
import { createBuiltInTools } from './tools/built-in-tools.js';

export const SYSTEM_PROMPT = [
  'You are a helpful assistant in a Slack workspace, with tools.',
  'Some tools need a human approval before they run; when you call one, the people in the thread are asked.',
  'If a tool output says the call was not approved or expired, do not call it again unless asked; tell the user.',
  'Answer concisely in Markdown (**bold**, _italic_, `code`, lists). Keep user mentions such as <@U123> exactly as written.',
].join(' ');

export interface BotOverrides {
  model?: ChatModel;
  clock?: Clock;
  newId?: IdGenerator;
  policy?: ApprovalPolicy;
  limits?: RunnerLimits;
  /** The tools to register, given the built-in ones (tests add a failing tool or retire one). */
  tools?: (builtIn: AgentTool[]) => AgentTool[];
  retryConfig?: webApi.RetryOptions;
  /** How often approval deadlines (expiry, reminders) are checked. */
  schedulerIntervalMs?: number;
  /** How often cards and replies Slack did not accept are posted again; default 30 s. */
  deliveryRetryMs?: number;
}

export interface Bot {
  start(): Promise<{ port: number }>;
  /** Stops intake, lets in-flight work finish (bounded), closes the database. */
  stop(graceMs?: number): Promise<void>;
  conversations: ConversationService;
  /** Checks approval deadlines now (the scheduler also does on its own interval). */
  checkDeadlines(): Promise<void>;
}

/** The composition root shared by `npm start` and the end-to-end tests: wires every adapter to the core. */
export function createBot(config: Config, logger: Logger, overrides: BotOverrides = {}): Bot {
  const mcpServers = loadMcpServers(config.mcpServersFile);
  const clock = overrides.clock ?? { now: () => Date.now() };
  const newId = overrides.newId ?? randomId;
  const database = openDatabase(config.databasePath);
  const { db } = database;
  const policy = overrides.policy ?? policyOrThrow(config.approvalPolicyFile);
  const approvalStore = createApprovalStore(db, clock);
  const model = overrides.model ?? createOpenAIModel({ ...config.openai, systemPrompt: SYSTEM_PROMPT });
  let conversations: ConversationService | undefined;
  let registry: ToolRegistry | undefined;
  const slack = createSlackApp(
    {
      botToken: config.slack.botToken,
      mode: config.slack.mode,
      apiUrl: config.slack.apiUrl,
      port: config.port,
      logLevel: config.logLevel,
      logger,
      health: () => ({
        ok: database.isOpen(),
        detail: {
          database: database.isOpen() ? 'ok' : 'closed',
          ...(mcpServers.length > 0 ? { mcp: mcp.status() } : {}),
        },
      }),
      ...(overrides.retryConfig ? { retryConfig: overrides.retryConfig } : {}),
      cards: createApprovalCardStore(db, clock, approvalStore),
      auditIncludesWorkspaceAdmins: config.auditIncludesWorkspaceAdmins,
    },
    (surface, client) => {
      const builtIn = createBuiltInTools({ clock, notes: createNotesStore(db, clock), poster: surface });
      const tools = new ToolRegistry(overrides.tools ? overrides.tools(builtIn) : builtIn);
      registry = tools;
      const runner = new Runner({
        model,
        tools,
        policy,
        store: createRunStore(db, clock),
        clock,
        newId,
        logger,
        limits: overrides.limits ?? DEFAULT_LIMITS,
      });
      conversations = new ConversationService({
        store: createConversationStore(db, clock, newId),
        runner,
        surface,
        clock,
        newId,
        logger,
        threadContextMessages: config.threadContextMessages,
      });
      const welcome = new WelcomeService({
        store: createGreetingStore(db),
        surface,
        clock,
        logger,
        prompts: config.suggestedPrompts,
      });
      const approvalStore = createApprovalStore(db, clock);
      const approvals = new ApprovalService({
        store: approvalStore,
        clock,
        adminUserIds: config.adminUserIds,
        groups: createUserGroupDirectory(client, clock, logger),
      });
      const edits = new ArgumentEditService({ tools, approvals, store: approvalStore });
      return {
        conversations,
        approvals,
        edits,
        welcome,
        dedupe: createDedupeStore(db, () => clock.now()),
        auditQueries: createAuditQueryStore(db),
        standing: createStandingApprovals(db),
      };
    },
  );
  if (!conversations || !registry) throw new Error('Slack app did not build its services');
  const service: ConversationService = conversations;
  const mcp = new McpServers({ servers: mcpServers, registry, logger });
  const scheduler = new ApprovalScheduler({
    store: createApprovalTimerStore(db, TERMINAL_TEAM_ID),
    events: createApprovalNotifier({
      client: slack.app.client,
      surface: slack.surface,
      conversations: service,
      adminUserIds: config.adminUserIds,
      logger,
      afterExpiry: (approval) => slack.home.afterDecision(approval, []),
    }),
    clock,
    logger,
    intervalMs: overrides.schedulerIntervalMs ?? DEFAULT_SCHEDULER_INTERVAL_MS,
  });
  let retryTimer: NodeJS.Timeout | undefined;
  // The terminal chat shares the database; its threads are not Slack's to post in.
  const slackThreads = (thread: ThreadRef) => !isTerminalThread(thread);
  const retryDeliveries = () =>
    service.retryDeliveries(slackThreads).catch((error: unknown) => {
      logger.error('retrying deliveries failed', { error: describeError(error) });
    });
  return {
    conversations: service,
    checkDeadlines: () => scheduler.tick(),
    async start() {
      approvalStore.recordAudit([
        auditEvent('policy.loaded', { at: clock.now(), payload: { summary: policy.summary } }),
      ]);
      // Before recovery: a run resumed at start-up must find the MCP tools it paused on.
      await mcp.connectAll();
      const started = await slack.start();
      // Recovery drives whole runs (model calls included): it must not hold back start-up or signal handling.
      service.recover(slackThreads).catch((error: unknown) => {
        logger.error('recovery failed', { error: describeError(error) });
      });
      // Handles at once what expired while the process was down, then checks on its interval.
      await scheduler.start();
      retryTimer = setInterval(retryDeliveries, overrides.deliveryRetryMs ?? 30_000);
      retryTimer.unref();
      return started;
    },
    async stop(graceMs = 10_000) {
      await scheduler.stop();
      clearInterval(retryTimer);
      await slack.stop();
      const finished = (async () => {
        await slack.idle();
        await service.idle();
      })();
      await Promise.race([finished, new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
      await mcp.close();
      database.close();
    },
  };
}

function policyOrThrow(file: string | undefined): ApprovalPolicy {
  const loaded = loadApprovalPolicy(file);
  if (!loaded.ok)
    throw new AppError('config.policy', `Invalid approval policy: ${loaded.problems.join('; ')}`);
  return loaded.policy;
}
