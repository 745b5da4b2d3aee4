import { existsSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { type ConfigPurpose, settingProblems } from './config-problems.js';
import { type Env, envSchema } from './config-schema.js';
import type { SuggestedPrompt } from './config-suggested-prompts.js';
import { contextTokensOf } from './known-models.js';

export type SlackMode = { kind: 'socket'; appToken: string } | { kind: 'http'; signingSecret: string };

/** SQLite (a file, the embedded default) or PostgreSQL (several bot processes sharing the work). */
export type DatabaseConfig =
  | { kind: 'sqlite'; path: string }
  | { kind: 'postgres'; url: string; poolSize: number };

/**
 * Installs into several workspaces (OAuth): set when the app's client ID and secret and a state secret are set
 * and SLACK_BOT_TOKEN is not. Each workspace's token is then stored, encrypted, when it installs the app.
 */
export interface OAuthInstallConfig {
  clientId: string;
  clientSecret: string;
  /** Signs the `state` of each install. */
  stateSecret: string;
  /** AES-256-GCM keys (32 bytes each) of the stored tokens: `current` writes, both read. */
  tokenKeys: { current: Buffer; previous: Buffer | undefined };
}

export interface Config {
  /**
   * `botToken` is the one token of a single-workspace bot; empty in OAuth mode (`oauth` set), where each
   * workspace's token comes from its stored installation.
   */
  slack: { botToken: string; mode: SlackMode; apiUrl: string; oauth: OAuthInstallConfig | undefined };
  port: number;
  openai: { apiKey: string; baseURL: string | undefined; model: string; stream: boolean; timeoutMs: number };
  /**
   * The model's context in tokens (MODEL_CONTEXT_TOKENS, else known from the model's name) and the percent of it
   * kept free for the answer (MODEL_ANSWER_PERCENT): each request's history is fitted to the rest.
   */
  modelContext: { contextTokens: number; answerPercent: number };
  database: DatabaseConfig;
  /**
   * The reviewer's note on each request before its card is posted (APPROVAL_REVIEW=on, or a model named by
   * APPROVAL_REVIEW_MODEL): the model it asks; undefined: no review.
   */
  review: { model: string } | undefined;
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
  /** People who may read the audit log in the web console, and nothing more. */
  auditorUserIds: string[];
  /** The web console (docs/console.md). */
  console: ConsoleConfig;
  /** Slack workspace admins and owners may also use /approvals and the admins' App Home (read-only rights). */
  auditIncludesWorkspaceAdmins: boolean;
  /** `/healthz` also reports its details (workers, MCP servers and their errors, memory); else only the status. */
  healthzDetails: boolean;
  approvalPolicyFile: string | undefined;
  /** JSON file listing MCP servers whose tools the agent gets (src/mcp/servers-file.ts). */
  mcpServersFile: string | undefined;
  /** Characters of a tool's output the model reads; a longer output is cut, and kept whole in the audit log. */
  toolOutputMaxChars: number;
  /** JSON file of named agents the bot's own agent may call as tools (src/agent/agents-file.ts). */
  agentsFile: string | undefined;
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

export interface ConsoleConfig {
  /** Its public base URL (CONSOLE_URL): set, it is served to everyone; unset, only on 127.0.0.1 (one-time links). */
  publicUrl: string | undefined;
  /** Sign in with Slack (OpenID Connect), when the app's client ID and secret are set. */
  slackSignIn: { clientId: string; clientSecret: string } | undefined;
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

/** Where and how audit events are pushed (AUDIT_WEBHOOK_URL and its settings). */
export interface AuditWebhookConfig {
  url: string;
  /** HMAC-SHA256 key of the X-Audit-Signature header. */
  secret: string;
  /** Events per request at most. */
  batchSize: number;
  /** A request not answered within this counts as failed and is retried. */
  timeoutMs: number;
  /** A request's body at most, in bytes (a batch is cut short to fit; an event larger alone goes alone). */
  maxBytes: number;
}

/** The SIEM the audit events are pushed to, and the key that signs checkpoints of the chain. */
export interface AuditDelivery {
  webhook: AuditWebhookConfig | undefined;
  /** A file with an Ed25519 private key in PEM: checkpoints are signed with it. */
  signingKeyFile: string | undefined;
  /**
   * Where each checkpoint is also posted: a channel, and the workspace it is in (required when installed into
   * several workspaces: the channel is posted to with that workspace's token).
   */
  checkpointChannel: { teamId: string | undefined; channelId: string } | undefined;
  /** Conversation content older than this many days is removed daily (the proof stays); unset keeps it all. */
  retentionDays: number | undefined;
}

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
  problems.push(...settingProblems(cleaned, purpose));
  if (parsed.success) problems.push(...contextProblems(parsed.data));
  if (!parsed.success || problems.length > 0) return { ok: false, problems };
  const e = parsed.data;
  const mode: SlackMode = e.SLACK_APP_TOKEN
    ? { kind: 'socket', appToken: e.SLACK_APP_TOKEN }
    : { kind: 'http', signingSecret: e.SLACK_SIGNING_SECRET ?? '' };
  return {
    ok: true,
    config: {
      slack: { botToken: e.SLACK_BOT_TOKEN ?? '', mode, apiUrl: e.SLACK_API_URL, oauth: oauthConfig(e) },
      port: e.PORT,
      // Local OpenAI-compatible servers usually ignore the key, but the client insists on one.
      openai: {
        apiKey: e.OPENAI_API_KEY ?? 'not-needed',
        baseURL: e.OPENAI_BASE_URL,
        model: e.OPENAI_MODEL,
        stream: e.OPENAI_STREAM,
        timeoutMs: e.OPENAI_TIMEOUT_MS,
      },
      modelContext: {
        contextTokens: e.MODEL_CONTEXT_TOKENS ?? contextTokensOf(e.OPENAI_MODEL),
        answerPercent: e.MODEL_ANSWER_PERCENT,
      },
      review:
        e.APPROVAL_REVIEW === 'on' || (e.APPROVAL_REVIEW === undefined && e.APPROVAL_REVIEW_MODEL)
          ? { model: e.APPROVAL_REVIEW_MODEL ?? e.OPENAI_MODEL }
          : undefined,
      database: e.DATABASE_URL
        ? { kind: 'postgres', url: e.DATABASE_URL, poolSize: e.DATABASE_POOL_SIZE }
        : { kind: 'sqlite', path: e.DATABASE_PATH },
      runLeaseMs: e.RUN_LEASE_MS,
      maxActiveRuns: e.MAX_ACTIVE_RUNS,
      workers: e.WORKERS,
      adminUserIds: e.ADMIN_USER_IDS,
      auditorUserIds: e.AUDITOR_USER_IDS,
      console: {
        publicUrl: e.CONSOLE_URL?.replace(/\/+$/, ''),
        slackSignIn:
          e.SLACK_CLIENT_ID && e.SLACK_CLIENT_SECRET
            ? { clientId: e.SLACK_CLIENT_ID, clientSecret: e.SLACK_CLIENT_SECRET }
            : undefined,
      },
      auditIncludesWorkspaceAdmins: e.AUDIT_INCLUDE_WORKSPACE_ADMINS,
      healthzDetails: e.HEALTHZ_DETAILS,
      approvalPolicyFile: e.APPROVAL_POLICY_FILE,
      mcpServersFile: e.MCP_SERVERS_FILE,
      toolOutputMaxChars: e.TOOL_OUTPUT_MAX_CHARS,
      agentsFile: e.AGENTS_FILE,
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
                maxBytes: e.AUDIT_WEBHOOK_MAX_BYTES,
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

/** OAuth mode's settings; undefined with a bot token (problems of a half-set OAuth are found before this). */
function oauthConfig(e: Env): OAuthInstallConfig | undefined {
  const { SLACK_CLIENT_ID: clientId, SLACK_CLIENT_SECRET: clientSecret, SLACK_STATE_SECRET: stateSecret } = e;
  const key = e.TOKEN_ENCRYPTION_KEY;
  if (e.SLACK_BOT_TOKEN || !clientId || !clientSecret || !stateSecret || !key) return undefined;
  const previous = e.TOKEN_ENCRYPTION_KEY_PREVIOUS;
  return {
    clientId,
    clientSecret,
    stateSecret,
    tokenKeys: {
      current: Buffer.from(key, 'base64'),
      previous: previous ? Buffer.from(previous, 'base64') : undefined,
    },
  };
}

/** The least a request may hold once the answer's share is kept free: the instructions and tools alone take about this. */
const MIN_REQUEST_TOKENS = 1024;

/** A context whose answer share leaves too little for the request itself. */
function contextProblems(e: Env): string[] {
  const context = e.MODEL_CONTEXT_TOKENS ?? contextTokensOf(e.OPENAI_MODEL);
  const request = Math.floor((context * (100 - e.MODEL_ANSWER_PERCENT)) / 100);
  if (request >= MIN_REQUEST_TOKENS) return [];
  return [
    `MODEL_ANSWER_PERCENT: ${e.MODEL_ANSWER_PERCENT} percent of a ${context}-token context leaves ${request} tokens for the request, fewer than ${MIN_REQUEST_TOKENS}; lower it or raise MODEL_CONTEXT_TOKENS`,
  ];
}

/** The OTLP endpoints: a signal's own variable as it is, else the base endpoint with /v1/traces or /v1/metrics. */
function telemetryConfig(e: Env): TelemetryConfig | undefined {
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
