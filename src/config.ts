import { existsSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { z } from 'zod';
import { DEFAULT_SUGGESTED_PROMPTS, parseSuggestedPrompts } from './conversations/suggested-prompts.js';
import type { SuggestedPrompt } from './conversations/welcome-service.js';

const SLACK_USER_ID = /^[UW][A-Z0-9]{2,}$/;

const envSchema = z.object({
  SLACK_BOT_TOKEN: z
    .string()
    .regex(/^xoxb-/, 'must be a bot token starting with xoxb- (Slack app settings → OAuth & Permissions)')
    .optional(),
  SLACK_APP_TOKEN: z
    .string()
    .regex(/^xapp-/, 'must be an app-level token starting with xapp- (Basic Information → App-Level Tokens)')
    .optional(),
  SLACK_SIGNING_SECRET: z.string().min(1).optional(),
  SLACK_API_URL: z
    .url({ message: 'must be a URL such as https://slack.com/api/' })
    .default('https://slack.com/api/'),
  PORT: z.coerce.number().int().min(0).max(65535, 'must be a port number from 0 to 65535').default(3000),
  OPENAI_API_KEY: z.string().min(1).optional(),
  OPENAI_BASE_URL: z.url({ message: 'must be a URL such as http://localhost:11434/v1' }).optional(),
  OPENAI_MODEL: z.string().min(1).default('gpt-5-mini'),
  OPENAI_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(1, 'must be a positive number of milliseconds')
    .default(60_000),
  DATABASE_PATH: z.string().min(1).default('./data/bot.db'),
  DATABASE_URL: z
    .string()
    .regex(
      /^postgres(ql)?:\/\/\S+$/,
      'must be a PostgreSQL URL such as postgres://bot:secret@db.example.com/bot',
    )
    .optional(),
  DATABASE_POOL_SIZE: z.coerce
    .number()
    .int()
    .min(1)
    .max(100, 'must be a number of connections from 1 to 100')
    .default(10),
  WORKERS: z.coerce
    .number()
    .int()
    .min(0)
    .max(16, 'must be a number of worker threads from 0 to 16')
    .default(1),
  RUN_LEASE_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .max(30_000, 'must be a number of milliseconds from 1000 to 30000')
    .default(30_000),
  ADMIN_USER_IDS: z
    .string()
    .default('')
    .transform((raw) =>
      raw
        .split(',')
        .map((id) => id.trim())
        .filter((id) => id.length > 0),
    )
    .refine(
      (ids) => ids.every((id) => SLACK_USER_ID.test(id)),
      'must be comma-separated Slack user IDs such as U012ABCDEF',
    ),
  APPROVAL_POLICY_FILE: z.string().min(1).optional(),
  MCP_SERVERS_FILE: z.string().min(1).optional(),
  AUDIT_INCLUDE_WORKSPACE_ADMINS: z.stringbool({ error: 'must be true or false' }).default(false),
  HEALTHZ_DETAILS: z.stringbool({ error: 'must be true or false' }).default(false),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
  OPENAI_STREAM: z.stringbool({ error: 'must be true or false' }).default(true),
  THREAD_CONTEXT_MESSAGES: z.coerce
    .number()
    .int()
    .min(0)
    .max(200, 'must be a number of messages from 0 to 200')
    .default(20),
  SUGGESTED_PROMPTS: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      if (raw === undefined) return [...DEFAULT_SUGGESTED_PROMPTS];
      const parsed = parseSuggestedPrompts(raw);
      if (parsed.ok) return parsed.prompts;
      ctx.addIssue({ code: 'custom', message: parsed.error });
      return z.NEVER;
    }),
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0, 'must be a number of milliseconds').default(10_000),
});

export type SlackMode = { kind: 'socket'; appToken: string } | { kind: 'http'; signingSecret: string };

/** SQLite (a file, the embedded default) or PostgreSQL (several bot processes sharing the work). */
export type DatabaseConfig =
  | { kind: 'sqlite'; path: string }
  | { kind: 'postgres'; url: string; poolSize: number };

export interface Config {
  slack: { botToken: string; mode: SlackMode; apiUrl: string };
  port: number;
  openai: { apiKey: string; baseURL: string | undefined; model: string; stream: boolean; timeoutMs: number };
  database: DatabaseConfig;
  /**
   * How long a process may hold a running run without renewing its claim; after that another process takes
   * the run over (its owner stopped). Renewed every third of it while the run is driven.
   */
  runLeaseMs: number;
  /**
   * Worker threads that drive runs, so the thread answering Slack does nothing else; 0 drives runs in that
   * thread too.
   */
  workers: number;
  adminUserIds: string[];
  /** Slack workspace admins and owners may also use /approvals and the admins' App Home (read-only rights). */
  auditIncludesWorkspaceAdmins: boolean;
  /** `/healthz` also reports its details (workers, MCP servers and their errors, memory); else only the status. */
  healthzDetails: boolean;
  approvalPolicyFile: string | undefined;
  /** JSON file listing MCP servers whose tools the agent gets (src/mcp/servers-file.ts). */
  mcpServersFile: string | undefined;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  /** Earlier thread messages read when the bot is first mentioned mid-thread (0: none). */
  threadContextMessages: number;
  suggestedPrompts: SuggestedPrompt[];
  /** How long a stopping bot waits for in-flight work before it closes the database. */
  shutdownGraceMs: number;
}

/**
 * What the calling program needs: the bot needs Slack credentials, the terminal chat does not, and the audit
 * command line needs neither Slack nor the model (only the database).
 */
export type ConfigPurpose = 'bot' | 'chat' | 'audit';

export type ConfigResult = { ok: true; config: Config } | { ok: false; problems: string[] };

/** Reads `.env` from `dir` when present. Variables already in `env` win over the file. */
export function withDotEnv(env: NodeJS.ProcessEnv, dir = process.cwd()): NodeJS.ProcessEnv {
  const file = `${dir}/.env`;
  if (!existsSync(file)) return env;
  return { ...parseEnv(readFileSync(file, 'utf8')), ...env };
}

/**
 * The only reader of the environment. Every problem is collected, so one start-up error lists them all
 * together with how to fix each.
 */
export function loadConfig(env: NodeJS.ProcessEnv, purpose: ConfigPurpose = 'bot'): ConfigResult {
  const cleaned = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value !== ''),
  );
  const parsed = envSchema.safeParse(cleaned);
  const problems = parsed.success
    ? []
    : parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
  problems.push(...placeholders(cleaned), ...missingSettings(cleaned, purpose));
  if (!parsed.success || problems.length > 0) return { ok: false, problems };
  const e = parsed.data;
  const mode: SlackMode = e.SLACK_APP_TOKEN
    ? { kind: 'socket', appToken: e.SLACK_APP_TOKEN }
    : { kind: 'http', signingSecret: e.SLACK_SIGNING_SECRET ?? '' };
  return {
    ok: true,
    config: {
      slack: { botToken: e.SLACK_BOT_TOKEN ?? '', mode, apiUrl: e.SLACK_API_URL },
      port: e.PORT,
      // Local OpenAI-compatible servers usually ignore the key, but the client insists on one.
      openai: {
        apiKey: e.OPENAI_API_KEY ?? 'not-needed',
        baseURL: e.OPENAI_BASE_URL,
        model: e.OPENAI_MODEL,
        stream: e.OPENAI_STREAM,
        timeoutMs: e.OPENAI_TIMEOUT_MS,
      },
      database: e.DATABASE_URL
        ? { kind: 'postgres', url: e.DATABASE_URL, poolSize: e.DATABASE_POOL_SIZE }
        : { kind: 'sqlite', path: e.DATABASE_PATH },
      runLeaseMs: e.RUN_LEASE_MS,
      workers: e.WORKERS,
      adminUserIds: e.ADMIN_USER_IDS,
      auditIncludesWorkspaceAdmins: e.AUDIT_INCLUDE_WORKSPACE_ADMINS,
      healthzDetails: e.HEALTHZ_DETAILS,
      approvalPolicyFile: e.APPROVAL_POLICY_FILE,
      mcpServersFile: e.MCP_SERVERS_FILE,
      logLevel: e.LOG_LEVEL,
      threadContextMessages: e.THREAD_CONTEXT_MESSAGES,
      suggestedPrompts: e.SUGGESTED_PROMPTS,
      shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    },
  };
}

/**
 * The example values of .env.example. A copy that was not filled in is refused here, by name, instead of
 * failing later at Slack or at the model with a message that does not say which setting is wrong.
 */
const PLACEHOLDERS: Record<string, { value: string; fix: string }> = {
  SLACK_BOT_TOKEN: {
    value: 'xoxb-your-bot-token',
    fix: 'put the Bot User OAuth Token here (Slack app settings → OAuth & Permissions)',
  },
  SLACK_APP_TOKEN: {
    value: 'xapp-your-app-level-token',
    fix: 'put the app-level token here (Basic Information → App-Level Tokens), or leave it empty for HTTP mode',
  },
  OPENAI_API_KEY: {
    value: 'sk-your-key',
    fix: 'put your API key here, or leave it empty when OPENAI_BASE_URL points at a server that needs none',
  },
};

function placeholders(env: Record<string, string | undefined>): string[] {
  return Object.entries(PLACEHOLDERS)
    .filter(([name, placeholder]) => env[name]?.trim() === placeholder.value)
    .map(
      ([name, placeholder]) =>
        `${name}: still the example value "${placeholder.value}" from .env.example; ${placeholder.fix}`,
    );
}

/** Settings that are optional one by one but required together, by what the program is for. */
function missingSettings(env: Record<string, string | undefined>, purpose: ConfigPurpose): string[] {
  const problems: string[] = [];
  if (purpose === 'bot') {
    if (!env.SLACK_BOT_TOKEN)
      problems.push('SLACK_BOT_TOKEN: required (xoxb-…, Slack app settings → OAuth & Permissions)');
    if (!env.SLACK_APP_TOKEN && !env.SLACK_SIGNING_SECRET) {
      problems.push(
        'SLACK_SIGNING_SECRET: required in HTTP mode (Basic Information → Signing Secret); or set SLACK_APP_TOKEN for Socket Mode',
      );
    }
  }
  if (purpose !== 'audit' && !env.OPENAI_API_KEY && !env.OPENAI_BASE_URL) {
    problems.push('OPENAI_API_KEY: required unless OPENAI_BASE_URL points at an OpenAI-compatible server');
  }
  return problems;
}
