import type { StoredItem } from '../agent/history.js';
import type { ApprovalPolicy } from '../approvals/policy.js';
import type { ChatSessionDeps } from '../cli/chat-session.js';
import { createTerminalSurface } from '../cli/terminal-surface.js';
import type { Config } from '../config.js';
import { HAND_OVER_STEP_MS } from '../conversations/conversation-service.js';
import type { ThreadRef } from '../conversations/surface-ports.js';
import type { Logger } from '../logger.js';
import { type Core, createCore } from './core.js';

/** The Slack bot's prompt, for a terminal: plain text instead of Slack mrkdwn. */
const TERMINAL_SYSTEM_PROMPT = [
  'You are a helpful assistant in a terminal chat, with tools.',
  'Some tools need a human approval before they run; when you call one, the person at the terminal is asked.',
  'If a tool output says the call was not approved or expired, do not call it again unless asked; tell the user.',
  'Answer concisely in plain text.',
].join(' ');

export interface ChatServices
  extends Pick<ChatSessionDeps, 'conversations' | 'approvals' | 'edits' | 'followUp' | 'pendingApprovals'> {
  findConversation(thread: ThreadRef): Promise<string | undefined>;
  history(conversationId: string): Promise<StoredItem[]>;
  mcp: Core['mcp'];
  close(): Promise<void>;
}

/**
 * The same core as the Slack bot (compose/core.ts): runner, conversation, approval and follow-up services on the
 * same database, policy and audit log, with the terminal as the surface and the MCP servers of MCP_SERVERS_FILE.
 */
export async function createChatServices(
  config: Config,
  logger: Logger,
  policy: ApprovalPolicy,
  write: (text: string) => void,
): Promise<ChatServices> {
  const surface = createTerminalSurface(write);
  const core = await createCore(config, logger, policy, () => ({
    surface,
    surfaceKind: 'terminal' as const,
    systemPrompt: TERMINAL_SYSTEM_PROMPT,
  }));
  const { stores, conversations } = core;
  return {
    conversations,
    approvals: core.approvals,
    edits: core.edits,
    followUp: core.followUp,
    findConversation: (thread) => stores.conversations.find(thread),
    pendingApprovals: (conversationId) => stores.approvals.pendingIn(conversationId),
    history: (conversationId) => stores.runs.loadHistory(conversationId),
    mcp: core.mcp,
    async close() {
      await conversations.idle();
      // What was shown is written off before the database closes (card updates it owed).
      await conversations.handOver(HAND_OVER_STEP_MS);
      await core.mcp.close();
      await core.database.close();
    },
  };
}
