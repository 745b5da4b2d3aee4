import { createPrivateKey } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { z } from 'zod';
import type { AuditWebhookConfig } from './audit/audit-push.js';
import { wholeNumber } from './config-numbers.js';
import { DEFAULT_SUGGESTED_PROMPTS, parseSuggestedPrompts } from './conversations/suggested-prompts.js';
import type { SuggestedPrompt } from './conversations/welcome-service.js';

const SLACK_USER_ID = /^[UW][A-Z0-9]{2,}$/;

/** `a=1,b=2`, as the OpenTelemetry variables are written: a record, or the variable's problem. */
const keyValues = () =>
  z
    .string()
    .optional()
    .transform((raw, ctx) => {
      const pairs = parseKeyValues(raw);
      if (pairs) return pairs;
      ctx.addIssue({ code: 'custom', message: 'must be key=value pairs separated by commas' });
      return z.NEVER;
    });

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
  PORT: wholeNumber({ min: 0, max: 65535 }).default(3000),
  OPENAI_API_KEY: z.string().min(1).optional(),
  OPENAI_BASE_URL: z.url({ message: 'must be a URL such as http://localhost:11434/v1' }).optional(),
  OPENAI_MODEL: z.string().min(1).default('gpt-5-mini'),
  OPENAI_TIMEOUT_MS: wholeNumber({ min: 1, unit: 'milliseconds' }).default(60_000),
  DATABASE_PATH: z.string().min(1).default('./data/bot.db'),
  DATABASE_URL: z
    .string()
    .regex(
      /^postgres(ql)?:\/\/\S+$/,
      'must be a PostgreSQL URL such as postgres://bot:secret@db.example.com/bot',
    )
    .optional(),
  DATABASE_POOL_SIZE: wholeNumber({ min: 1, max: 100, unit: 'connections' }).default(10),
  WORKERS: wholeNumber({ min: 0, max: 16, unit: 'worker threads' }).default(1),
  MAX_ACTIVE_RUNS: wholeNumber({ min: 1, max: 1000, unit: 'runs' }).default(32),
  RUN_LEASE_MS: wholeNumber({ min: 1000, max: 30_000, unit: 'milliseconds' }).default(30_000),
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
  AUDIT_WEBHOOK_URL: z
    .url({ protocol: /^https?$/, message: 'must be an http(s) URL such as https://siem.example.com/audit' })
    .optional(),
  AUDIT_WEBHOOK_SECRET: z
    .string()
    .min(16, 'must be at least 16 characters (the receiver checks signatures with it)')
    .optional(),
  AUDIT_WEBHOOK_BATCH: wholeNumber({ min: 1, max: 1000, unit: 'events' }).default(100),
  AUDIT_WEBHOOK_TIMEOUT_MS: wholeNumber({ min: 100, max: 120_000, unit: 'milliseconds' }).default(10_000),
  AUDIT_SIGNING_KEY: z.string().min(1).optional(),
  OTEL_SDK_DISABLED: z.stringbool({ error: 'must be true or false' }).default(false),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ message: 'must be a URL such as http://collector:4318' }).optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z
    .url({ message: 'must be a URL such as http://collector:4318/v1/traces' })
    .optional(),
  OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: z
    .url({ message: 'must be a URL such as http://collector:4318/v1/metrics' })
    .optional(),
  OTEL_EXPORTER_OTLP_PROTOCOL: z
    .enum(['http/json'], { message: 'only http/json is supported (OTLP over HTTP with JSON bodies)' })
    .optional(),
  OTEL_EXPORTER_OTLP_HEADERS: keyValues(),
  OTEL_SERVICE_NAME: z.string().min(1).default('slack-approval-agent'),
  OTEL_RESOURCE_ATTRIBUTES: keyValues(),
  OTEL_METRIC_EXPORT_INTERVAL: wholeNumber({ min: 100, unit: 'milliseconds' }).default(60_000),
  OTEL_BSP_SCHEDULE_DELAY: wholeNumber({ min: 10, unit: 'milliseconds' }).default(5000),
  RETENTION_DAYS: wholeNumber({ min: 1, max: 36_500, unit: 'days' }).optional(),
  AUDIT_CHECKPOINT_CHANNEL: z
    .string()
    .regex(/^[CGD][A-Z0-9]{2,}$/, 'must be a Slack channel ID such as C012ABCDEF')
    .optional(),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
  OPENAI_STREAM: z.stringbool({ error: 'must be true or false' }).default(true),
  THREAD_CONTEXT_MESSAGES: wholeNumber({ min: 0, max: 200, unit: 'messages' }).default(20),
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
  SHUTDOWN_GRACE_MS: wholeNumber({ min: 0, unit: 'milliseconds' }).default(10_000),
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
  /** Runs each thread that drives runs drives at once; the others wait their turn. */
  maxActiveRuns: number;
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
  /** Where the audit log goes besides the database (docs/audit.md). */
  audit: AuditDelivery;
  /** OpenTelemetry export (OTLP over HTTP, JSON); undefined when no OTEL_ endpoint is set: nothing is measured. */
  telemetry: TelemetryConfig | undefined;
}

export interface TelemetryConfig {
  /** Where spans go; undefined exports none. */
  tracesUrl: string | undefined;
  metricsUrl: string | undefined;
  headers: Record<string, string>;
  serviceName: string;
  resourceAttributes: Record<string, string>;
  metricIntervalMs: number;
  /** How long ended spans wait to be sent together. */
  spanDelayMs: number;
}

/** The SIEM the audit events are pushed to, and the key that signs checkpoints of the chain. */
export interface AuditDelivery {
  webhook: AuditWebhookConfig | undefined;
  /** A file with an Ed25519 private key in PEM: checkpoints are signed with it. */
  signingKeyFile: string | undefined;
  /** Where each checkpoint is also posted. */
  checkpointChannel: string | undefined;
  /** Conversation content older than this many days is removed daily (the proof stays); unset keeps it all. */
  retentionDays: number | undefined;
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
      maxActiveRuns: e.MAX_ACTIVE_RUNS,
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
      audit: {
        webhook:
          e.AUDIT_WEBHOOK_URL && e.AUDIT_WEBHOOK_SECRET
            ? {
                url: e.AUDIT_WEBHOOK_URL,
                secret: e.AUDIT_WEBHOOK_SECRET,
                batchSize: e.AUDIT_WEBHOOK_BATCH,
                timeoutMs: e.AUDIT_WEBHOOK_TIMEOUT_MS,
              }
            : undefined,
        signingKeyFile: e.AUDIT_SIGNING_KEY,
        checkpointChannel: e.AUDIT_CHECKPOINT_CHANNEL,
        retentionDays: e.RETENTION_DAYS,
      },
      telemetry: telemetryConfig(e),
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
  if (env.AUDIT_WEBHOOK_URL && !env.AUDIT_WEBHOOK_SECRET) {
    problems.push(
      'AUDIT_WEBHOOK_SECRET: required with AUDIT_WEBHOOK_URL (the receiver checks signatures with it)',
    );
  }
  if (env.AUDIT_WEBHOOK_SECRET && !env.AUDIT_WEBHOOK_URL) {
    problems.push('AUDIT_WEBHOOK_URL: required with AUDIT_WEBHOOK_SECRET (where to push the audit events)');
  }
  if (env.AUDIT_CHECKPOINT_CHANNEL && !env.AUDIT_SIGNING_KEY) {
    problems.push('AUDIT_SIGNING_KEY: required with AUDIT_CHECKPOINT_CHANNEL (checkpoints are signed)');
  }
  if (purpose === 'bot' && env.AUDIT_SIGNING_KEY) {
    const problem = signingKeyProblem(env.AUDIT_SIGNING_KEY);
    if (problem) problems.push(`AUDIT_SIGNING_KEY: ${problem}`);
  }
  if (purpose !== 'audit' && !env.OPENAI_API_KEY && !env.OPENAI_BASE_URL) {
    problems.push('OPENAI_API_KEY: required unless OPENAI_BASE_URL points at an OpenAI-compatible server');
  }
  return problems;
}

/** Why the file cannot sign checkpoints, or undefined when it holds an Ed25519 private key. */
function signingKeyProblem(file: string): string | undefined {
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch {
    return `cannot read ${file} (a file with an Ed25519 private key in PEM)`;
  }
  try {
    const key = createPrivateKey(pem);
    return key.asymmetricKeyType === 'ed25519'
      ? undefined
      : `${file} holds a ${key.asymmetricKeyType ?? 'non-asymmetric'} key; an Ed25519 key is needed (openssl genpkey -algorithm ed25519)`;
  } catch {
    return `${file} is not a private key in PEM (create one with openssl genpkey -algorithm ed25519)`;
  }
}

/** `a=1,b=2` (values URL-decoded, as the OpenTelemetry variables are written); undefined when malformed. */
function parseKeyValues(raw: string | undefined): Record<string, string> | undefined {
  if (raw === undefined) return {};
  const out: Record<string, string> = {};
  for (const part of raw.split(',')) {
    if (part.trim() === '') continue;
    const at = part.indexOf('=');
    if (at <= 0) return undefined;
    try {
      out[part.slice(0, at).trim()] = decodeURIComponent(part.slice(at + 1).trim());
    } catch {
      return undefined;
    }
  }
  return out;
}

/** The OTLP endpoints: a signal's own variable as it is, else the base endpoint with /v1/traces or /v1/metrics. */
function telemetryConfig(e: z.infer<typeof envSchema>): TelemetryConfig | undefined {
  if (e.OTEL_SDK_DISABLED) return undefined;
  const base = e.OTEL_EXPORTER_OTLP_ENDPOINT?.replace(/\/+$/, '');
  const tracesUrl = e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (base ? `${base}/v1/traces` : undefined);
  const metricsUrl = e.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT ?? (base ? `${base}/v1/metrics` : undefined);
  if (!tracesUrl && !metricsUrl) return undefined;
  return {
    tracesUrl,
    metricsUrl,
    headers: e.OTEL_EXPORTER_OTLP_HEADERS,
    serviceName: e.OTEL_SERVICE_NAME,
    resourceAttributes: e.OTEL_RESOURCE_ATTRIBUTES,
    metricIntervalMs: e.OTEL_METRIC_EXPORT_INTERVAL,
    spanDelayMs: e.OTEL_BSP_SCHEDULE_DELAY,
  };
}
