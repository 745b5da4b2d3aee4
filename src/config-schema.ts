import { z } from 'zod';
import { wholeNumber } from './config-numbers.js';
import { DEFAULT_SUGGESTED_PROMPTS, parseSuggestedPrompts } from './config-suggested-prompts.js';

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

/** A comma-separated list of Slack user IDs (empty when unset). */
const userIds = () =>
  z
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
    );

/** A key of AES-256-GCM: 32 random bytes in base64 (`openssl rand -base64 32`). */
const encryptionKey = () =>
  z
    .string()
    .refine(
      (raw) => /^[A-Za-z0-9+/]+={0,2}$/.test(raw) && Buffer.from(raw, 'base64').length === 32,
      'must be 32 bytes in base64 (openssl rand -base64 32)',
    )
    .optional();

/** Every environment variable the product reads, with its default and what a valid value looks like. */
export const envSchema = z.object({
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
  CONSOLE_URL: z
    .url({
      protocol: /^https?$/,
      message: "must be the console's public base URL, such as https://approvals.example.com",
    })
    .optional(),
  SLACK_CLIENT_ID: z.string().min(1).optional(),
  SLACK_CLIENT_SECRET: z.string().min(1).optional(),
  SLACK_STATE_SECRET: z
    .string()
    .min(32, 'must be at least 32 characters (it signs the state of each install; openssl rand -hex 32)')
    .optional(),
  TOKEN_ENCRYPTION_KEY: encryptionKey(),
  TOKEN_ENCRYPTION_KEY_PREVIOUS: encryptionKey(),
  PORT: wholeNumber({ min: 0, max: 65535 }).default(3000),
  OPENAI_API_KEY: z.string().min(1).optional(),
  OPENAI_BASE_URL: z.url({ message: 'must be a URL such as http://localhost:11434/v1' }).optional(),
  OPENAI_MODEL: z.string().min(1).default('gpt-5-mini'),
  /** Unset: on when APPROVAL_REVIEW_MODEL names a model; `off` wins over that. */
  APPROVAL_REVIEW: z.enum(['on', 'off'], { message: 'must be on or off' }).optional(),
  APPROVAL_REVIEW_MODEL: z.string().min(1).optional(),
  /** Unset: the window of OPENAI_MODEL when its name is known (src/known-models.ts), else 128,000. */
  MODEL_CONTEXT_TOKENS: wholeNumber({ min: 2048, max: 10_000_000, unit: 'tokens' }).optional(),
  MODEL_ANSWER_PERCENT: wholeNumber({ min: 5, max: 80, unit: 'percent' }).default(20),
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
  ADMIN_USER_IDS: userIds(),
  AUDITOR_USER_IDS: userIds(),
  APPROVAL_POLICY_FILE: z.string().min(1).optional(),
  MCP_SERVERS_FILE: z.string().min(1).optional(),
  TOOL_OUTPUT_MAX_CHARS: wholeNumber({ min: 1000, max: 1_000_000, unit: 'characters' }).default(16_000),
  AGENTS_FILE: z.string().min(1).optional(),
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
  AUDIT_WEBHOOK_MAX_BYTES: wholeNumber({ min: 65_536, max: 104_857_600, unit: 'bytes' }).default(1_048_576),
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
    .regex(
      /^(?:T[A-Z0-9]+:)?[CGD][A-Z0-9]{2,}$/,
      'must be a Slack channel ID such as C012ABCDEF, or T012AB:C012ABCDEF naming its workspace',
    )
    .transform((value) => {
      const [teamId, channelId] = value.includes(':') ? value.split(':') : [undefined, value];
      return { teamId, channelId: channelId ?? value };
    })
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

/** The environment once it passed `envSchema`: defaults filled in, numbers and lists parsed. */
export type Env = z.infer<typeof envSchema>;

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
