import { createOpenAIModel } from '../agent/openai-client.js';
import { DEFAULT_LIMITS, Runner } from '../agent/runner.js';
import { ToolRegistry } from '../agent/tool-registry.js';
import { ApprovalService } from '../approvals/approval-service.js';
import { ArgumentEditService } from '../approvals/argument-edit-service.js';
import { loadApprovalPolicy } from '../approvals/policy-file.js';
import type { Config } from '../config.js';
import { ConversationService } from '../conversations/conversation-service.js';
import type { ThreadRef } from '../conversations/ports.js';
import { createApprovalStore } from '../db/approval-store.js';
import { createConversationStore } from '../db/conversation-store.js';
import { openDatabase } from '../db/database.js';
import { createNotesStore } from '../db/notes-store.js';
import { listPendingApprovals } from '../db/pending-approvals.js';
import { createRunStore } from '../db/run-store.js';
import { AppError } from '../errors.js';
import { randomId } from '../ids.js';
import type { Logger } from '../logger.js';
import { loadMcpServers } from '../mcp/load-mcp-servers.js';
import { McpServers } from '../mcp/mcp-servers.js';
import { createBuiltInTools } from '../tools/built-in-tools.js';
import type { ChatSessionDeps } from './chat-session.js';
import { createTerminalSurface } from './terminal-surface.js';

/** The Slack bot's prompt, for a terminal: plain text instead of Slack mrkdwn. */
const TERMINAL_SYSTEM_PROMPT = [
  'You are a helpful assistant in a terminal chat, with tools.',
  'Some tools need a human approval before they run; when you call one, the person at the terminal is asked.',
  'If a tool output says the call was not approved or expired, do not call it again unless asked; tell the user.',
  'Answer concisely in plain text.',
].join(' ');

export interface ChatServices
  extends Pick<ChatSessionDeps, 'conversations' | 'approvals' | 'edits' | 'pendingApprovals' | 'history'> {
  findConversation(thread: ThreadRef): string | undefined;
  mcp: McpServers;
  close(): Promise<void>;
}

/**
 * The same core as the Slack bot (src/bot.ts): runner, conversation and approval services on the same
 * database, policy and audit log, with the terminal as the surface and the MCP servers of MCP_SERVERS_FILE.
 */
export function createChatServices(
  config: Config,
  logger: Logger,
  write: (text: string) => void,
): ChatServices {
  const mcpServers = loadMcpServers(config.mcpServersFile);
  const policy = loadApprovalPolicy(config.approvalPolicyFile);
  if (!policy.ok)
    throw new AppError('config.policy', `Invalid approval policy: ${policy.problems.join('; ')}`);
  const clock = { now: () => Date.now() };
  const database = openDatabase(config.databasePath);
  const { db } = database;
  const surface = createTerminalSurface(write);
  const tools = new ToolRegistry(
    createBuiltInTools({ clock, notes: createNotesStore(db, clock), poster: surface }),
  );
  const mcp = new McpServers({ servers: mcpServers, registry: tools, logger });
  const runStore = createRunStore(db, clock);
  const runner = new Runner({
    model: createOpenAIModel({ ...config.openai, systemPrompt: TERMINAL_SYSTEM_PROMPT }),
    tools,
    policy: policy.policy,
    store: runStore,
    clock,
    newId: randomId,
    logger,
    limits: DEFAULT_LIMITS,
  });
  const conversationStore = createConversationStore(db, clock, randomId);
  const conversations = new ConversationService({
    store: conversationStore,
    runner,
    surface,
    clock,
    newId: randomId,
    logger,
  });
  const approvalStore = createApprovalStore(db, clock);
  const approvals = new ApprovalService({
    store: approvalStore,
    clock,
    adminUserIds: config.adminUserIds,
  });
  const edits = new ArgumentEditService({ tools, approvals, store: approvalStore });
  return {
    conversations,
    approvals,
    edits,
    findConversation: (thread) => conversationStore.find(thread),
    pendingApprovals: (conversationId) => listPendingApprovals(db, conversationId),
    history: (conversationId) => runStore.loadHistory(conversationId),
    mcp,
    async close() {
      await conversations.idle();
      await mcp.close();
      database.close();
    },
  };
}
