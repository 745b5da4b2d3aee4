import { userInfo } from 'node:os';
import { parseArgs } from 'node:util';
import { createOpenAIModel } from '../agent/openai-client.js';
import { DEFAULT_LIMITS, Runner } from '../agent/runner.js';
import { ToolRegistry } from '../agent/tool-registry.js';
import { ApprovalService } from '../approvals/approval-service.js';
import { editApprovalArguments } from '../approvals/edit-arguments.js';
import { builtInPolicy } from '../approvals/policy.js';
import { loadConfig, withDotEnv } from '../config.js';
import { ConversationService } from '../conversations/conversation-service.js';
import { createApprovalEditStore } from '../db/approval-edit-store.js';
import { createApprovalStore } from '../db/approval-store.js';
import { createConversationStore } from '../db/conversation-store.js';
import { openDatabase } from '../db/database.js';
import { createNotesStore } from '../db/notes-store.js';
import { listPendingApprovals } from '../db/pending-approvals.js';
import { createRunStore } from '../db/run-store.js';
import { describeError } from '../errors.js';
import { randomId } from '../ids.js';
import { createLogger } from '../logger.js';
import { loadMcpServers } from '../mcp/load-mcp-servers.js';
import { McpServers } from '../mcp/mcp-servers.js';
import { createBuiltInTools } from '../tools/built-in-tools.js';
import { runChatSession } from './chat-session.js';
import { createLineReader } from './line-reader.js';
import { createTerminalSurface } from './terminal-surface.js';
import { terminalThread } from './terminal-thread.js';

/** The Slack bot's prompt, for a terminal: plain text instead of Slack mrkdwn. */
const TERMINAL_SYSTEM_PROMPT = [
  'You are a helpful assistant in a terminal chat, with tools.',
  'Some tools need a human approval before they run; when you call one, the person at the terminal is asked.',
  'If a tool output says the call was not approved or expired, do not call it again unless asked; tell the user.',
  'Answer concisely in plain text.',
].join(' ');

const USAGE = 'Usage: npm run chat -- [--thread NAME] [--user NAME]';
const NAME = /^[a-zA-Z0-9._@-]{1,64}$/;

/**
 * `npm run chat`: a conversation in the terminal with the same runner, database, policy and audit log as
 * the Slack bot, approvals answered at the prompt. Needs a model, no Slack.
 */
async function main(): Promise<number> {
  const args = parseArgs({
    options: { thread: { type: 'string' }, user: { type: 'string' }, help: { type: 'boolean' } },
    strict: true,
  }).values;
  if (args.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const threadName = args.thread ?? new Date().toISOString().slice(0, 19).replaceAll(':', '-');
  const userId = args.user ?? userInfo().username;
  if (!NAME.test(threadName) || !NAME.test(userId)) {
    process.stderr.write(`--thread and --user take letters, digits and . _ @ - (at most 64).\n${USAGE}\n`);
    return 1;
  }
  const loaded = loadConfig(withDotEnv(process.env), 'chat');
  if (!loaded.ok) {
    process.stderr.write(
      `The chat needs a model.\n${loaded.problems.map((p) => `  - ${p}`).join('\n')}\n` +
        'Set OPENAI_API_KEY (OpenAI), or OPENAI_BASE_URL for another OpenAI-compatible server (with OPENAI_MODEL),\n' +
        'in the environment or in .env, e.g.  OPENAI_BASE_URL=http://localhost:11434/v1 OPENAI_MODEL=llama3.2 npm run chat\n',
    );
    return 1;
  }
  const { config } = loaded;
  // The terminal is for the conversation: only warnings and errors are logged (to stderr), unless debugging.
  const logger = createLogger(config.logLevel === 'debug' ? 'debug' : 'warn');
  const mcpServers = loadMcpServers(config.mcpServersFile);
  const write = (text: string) => process.stdout.write(text);
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
    policy: builtInPolicy(),
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
  const approvals = new ApprovalService({
    store: createApprovalStore(db, clock),
    clock,
    adminUserIds: config.adminUserIds,
  });
  const thread = terminalThread(threadName);
  const reader = createLineReader(process.stdin, process.stdout);
  try {
    await mcp.connectAll();
    reportMcp(mcp, write);
    await runChatSession({
      conversations,
      approvals,
      editArguments: (request) =>
        editApprovalArguments(
          {
            store: createApprovalEditStore(db, clock),
            clock,
            tool: (name) => tools.get(name),
            isAdmin: (id) => approvals.isAdmin(id),
          },
          request,
        ),
      conversationId: () => conversationStore.find(thread),
      pendingApprovals: (conversationId) => listPendingApprovals(db, conversationId),
      history: (conversationId) => runStore.loadHistory(conversationId),
      thread,
      threadName,
      userId,
      reader,
      write,
    });
    await conversations.idle();
  } finally {
    reader.close();
    await mcp.close();
    database.close();
  }
  return 0;
}

function reportMcp(mcp: McpServers, write: (text: string) => void): void {
  for (const [name, status] of Object.entries(mcp.status())) {
    if (status.state === 'connected') write(`MCP server ${name}: ${status.tools.join(', ') || 'no tools'}\n`);
    else if (status.state === 'failed') write(`MCP server ${name} did not start: ${status.error}\n`);
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`The chat stopped: ${describeError(error)}\n`);
    process.exit(1);
  },
);
