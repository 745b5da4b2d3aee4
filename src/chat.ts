import { userInfo } from 'node:os';
import { parseArgs } from 'node:util';
import { agentsFileProblem } from './agent/agents-file.js';
import { loadApprovalPolicy } from './approvals/policy-file.js';
import { runChatSession } from './cli/chat-session.js';
import { createLineReader } from './cli/line-reader.js';
import { TERMINAL_NAME, terminalThread } from './cli/terminal-thread.js';
import { createChatServices } from './compose/terminal.js';
import { loadConfig, withDotEnv } from './config.js';
import { describeError } from './errors.js';
import { createLogger } from './logger.js';
import { mcpServerNames, mcpServersFileProblem } from './mcp/load-mcp-servers.js';
import type { McpServers } from './mcp/mcp-servers.js';
import { toolNames } from './tools/built-in-tools.js';

const USAGE = 'Usage: npm run chat -- [--thread NAME] [--user NAME]';

/** What `--help` prints: the usage and what each option does. */
const HELP = `${USAGE}

A conversation with the agent in the terminal, with the Slack bot's model, database, policy and audit log;
approvals are answered at the prompt (y/n). Needs a model (OPENAI_API_KEY, or OPENAI_BASE_URL), no Slack.

  --thread NAME  the conversation to continue (default: a new one named after the time)
  --user NAME    who is asking, as the audit log names them (default: your login name)`;

type ChatOptions =
  | { ok: true; threadName: string; userId: string }
  | { ok: false; message: string }
  | { ok: 'help' };

function parseOptions(argv: string[]): ChatOptions {
  if (argv[0] === 'help' || argv.includes('--help') || argv.includes('-h')) return { ok: 'help' };
  let values: { thread?: string | undefined; user?: string | undefined };
  try {
    values = parseArgs({
      args: argv,
      options: { thread: { type: 'string' }, user: { type: 'string' } },
    }).values;
  } catch (error) {
    return { ok: false, message: describeError(error) };
  }
  const threadName = values.thread ?? new Date().toISOString().slice(0, 19).replaceAll(':', '-');
  const userId = values.user ?? userInfo().username;
  if (!TERMINAL_NAME.test(threadName) || !TERMINAL_NAME.test(userId)) {
    return { ok: false, message: '--thread and --user take letters, digits and . _ @ - (at most 64).' };
  }
  return { ok: true, threadName, userId };
}

/**
 * `npm run chat`: a conversation in the terminal with the same runner, database, policy and audit log as
 * the Slack bot, approvals answered at the prompt. Needs a model, no Slack.
 */
async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  if (options.ok === 'help') {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  if (!options.ok) {
    process.stderr.write(`${options.message}\n${USAGE}\n`);
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
  const write = (text: string) => process.stdout.write(text);
  const policy = loadApprovalPolicy(config.approvalPolicyFile, toolNames());
  if (!policy.ok) {
    process.stderr.write(`Approval policy error:\n${policy.problems.map((p) => `  - ${p}`).join('\n')}\n`);
    return 1;
  }
  const mcpProblem = mcpServersFileProblem(config.mcpServersFile);
  if (mcpProblem !== undefined) {
    process.stderr.write(`${mcpProblem}\nFix the file (see docs/mcp.md) or unset MCP_SERVERS_FILE.\n`);
    return 1;
  }
  const known = { builtIn: toolNames(), mcpServers: mcpServerNames(config.mcpServersFile) };
  const agentsProblem = agentsFileProblem(config.agentsFile, known);
  if (agentsProblem !== undefined) {
    process.stderr.write(`${agentsProblem}\nFix the file (see docs/agents.md) or unset AGENTS_FILE.\n`);
    return 1;
  }
  const services = await createChatServices(config, logger, policy.policy, write);
  const thread = terminalThread(options.threadName);
  const reader = createLineReader(process.stdin, process.stdout);
  try {
    await services.mcp.connectAll();
    reportMcp(services.mcp, write);
    await runChatSession({
      ...services,
      conversationId: () => services.findConversation(thread),
      thread,
      threadName: options.threadName,
      userId: options.userId,
      reader,
      write,
    });
  } finally {
    reader.close();
    await services.close();
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
