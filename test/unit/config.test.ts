import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadConfig, withDotEnv } from '../../src/config.js';

const http = { SLACK_BOT_TOKEN: 'xoxb-1', SLACK_SIGNING_SECRET: 's', OPENAI_API_KEY: 'sk-1' };

describe('loadConfig', () => {
  it('applies the documented defaults and picks HTTP mode without an app token', () => {
    const result = loadConfig(http);
    if (!result.ok) throw new Error(result.problems.join());
    expect(result.config).toMatchObject({
      port: 3000,
      database: { kind: 'sqlite', path: './data/bot.db' },
      runLeaseMs: 30_000,
      maxActiveRuns: 32,
      adminUserIds: [],
      logLevel: 'info',
      slack: { apiUrl: 'https://slack.com/api/', mode: { kind: 'http', signingSecret: 's' } },
    });
  });

  it('refuses a number of active runs out of range, naming the variable', () => {
    for (const value of ['0', '1001', 'many']) {
      const result = loadConfig({ ...http, MAX_ACTIVE_RUNS: value });
      expect(result.ok ? [] : result.problems.join('\n')).toMatch(/MAX_ACTIVE_RUNS/);
    }
  });

  it('takes the model context from the model name unless MODEL_CONTEXT_TOKENS says it, and names bad values', () => {
    const context = (env: Record<string, string>) => {
      const result = loadConfig({ ...http, ...env });
      return result.ok ? result.config.modelContext : result.problems;
    };
    expect(context({})).toEqual({ contextTokens: 400_000, answerPercent: 20 });
    expect(context({ OPENAI_MODEL: 'qwen3:8b' })).toEqual({ contextTokens: 128_000, answerPercent: 20 });
    expect(
      context({ OPENAI_MODEL: 'qwen3:8b', MODEL_CONTEXT_TOKENS: '8192', MODEL_ANSWER_PERCENT: '25' }),
    ).toEqual({
      contextTokens: 8192,
      answerPercent: 25,
    });
    expect(context({ MODEL_CONTEXT_TOKENS: '6k', MODEL_ANSWER_PERCENT: '90' })).toEqual([
      "MODEL_CONTEXT_TOKENS: must be a whole number of tokens from 2048 to 10000000, got '6k'",
      "MODEL_ANSWER_PERCENT: must be a whole number of percent from 5 to 80, got '90'",
    ]);
    expect(context({ MODEL_CONTEXT_TOKENS: '2048', MODEL_ANSWER_PERCENT: '60' })).toEqual([
      'MODEL_ANSWER_PERCENT: 60 percent of a 2048-token context leaves 819 tokens for the request, fewer than 1024; lower it or raise MODEL_CONTEXT_TOKENS',
    ]);
  });

  it('reads the OpenTelemetry headers and resource attributes as key=value pairs, and names either when malformed', () => {
    const result = loadConfig({
      ...http,
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc, x-team=ops',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod',
    });
    expect(result.ok && result.config.telemetry).toMatchObject({
      tracesUrl: 'http://collector:4318/v1/traces',
      headers: { authorization: 'Bearer abc', 'x-team': 'ops' },
      resourceAttributes: { 'deployment.environment': 'prod' },
    });
    const malformed = loadConfig({
      ...http,
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_HEADERS: 'no-equals-sign',
      OTEL_RESOURCE_ATTRIBUTES: '=value',
    });
    expect(malformed.ok).toBe(false);
    const problems = malformed.ok ? '' : malformed.problems.join('\n');
    expect(problems).toContain('OTEL_EXPORTER_OTLP_HEADERS: must be key=value pairs separated by commas');
    expect(problems).toContain('OTEL_RESOURCE_ATTRIBUTES: must be key=value pairs separated by commas');
  });

  it('uses PostgreSQL when DATABASE_URL is set, with a pool of 10 unless DATABASE_POOL_SIZE says otherwise', () => {
    const url = 'postgres://bot:secret@db.example.com:5432/bot';
    const pooled = loadConfig({ ...http, DATABASE_URL: url, DATABASE_PATH: './ignored.db' });
    expect(pooled.ok && pooled.config.database).toEqual({ kind: 'postgres', url, poolSize: 10 });
    const sized = loadConfig({ ...http, DATABASE_URL: url, DATABASE_POOL_SIZE: '25', RUN_LEASE_MS: '5000' });
    expect(sized.ok && [sized.config.database, sized.config.runLeaseMs]).toEqual([
      { kind: 'postgres', url, poolSize: 25 },
      5000,
    ]);
  });

  it('refuses a database URL that is not PostgreSQL, and pool sizes and leases out of range', () => {
    const result = loadConfig({
      ...http,
      DATABASE_URL: 'mysql://db.example.com/bot',
      DATABASE_POOL_SIZE: '0',
      RUN_LEASE_MS: '999',
    });
    expect(result.ok).toBe(false);
    const problems = result.ok ? '' : result.problems.join('\n');
    for (const name of ['DATABASE_URL', 'DATABASE_POOL_SIZE', 'RUN_LEASE_MS'])
      expect(problems).toContain(name);
  });

  it('uses Socket Mode when SLACK_APP_TOKEN is set, and needs no signing secret then', () => {
    const result = loadConfig({
      SLACK_BOT_TOKEN: 'xoxb-1',
      SLACK_APP_TOKEN: 'xapp-1',
      OPENAI_BASE_URL: 'http://localhost:11434/v1',
    });
    expect(result.ok && result.config.slack.mode).toEqual({ kind: 'socket', appToken: 'xapp-1' });
  });

  it('lists every problem at once', () => {
    const result = loadConfig({ SLACK_BOT_TOKEN: 'bad', PORT: 'x', ADMIN_USER_IDS: 'U123ABC, nope' });
    expect(result.ok).toBe(false);
    const problems = result.ok ? [] : result.problems.join('\n');
    for (const name of [
      'SLACK_BOT_TOKEN',
      'PORT',
      'ADMIN_USER_IDS',
      'SLACK_SIGNING_SECRET',
      'OPENAI_API_KEY',
    ]) {
      expect(problems).toContain(name);
    }
  });

  it('refuses every example value of .env.example by name, in one message with the other problems', () => {
    const example = parseEnv(readFileSync(new URL('../../.env.example', import.meta.url), 'utf8'));
    const filled = Object.entries(example).filter(([, value]) => value !== '');
    expect(filled.map(([name]) => name).sort()).toEqual([
      'OPENAI_API_KEY',
      'SLACK_APP_TOKEN',
      'SLACK_BOT_TOKEN',
    ]);
    const result = loadConfig({ ...example, PORT: 'x' });
    const problems = result.ok ? [] : result.problems;
    for (const [name, value] of filled)
      expect(problems).toContainEqual(
        expect.stringMatching(
          new RegExp(`^${name}: still the example value "${value}" from \\.env\\.example; `),
        ),
      );
    expect(problems).toContainEqual(expect.stringMatching(/^PORT: /));
    // Only the copy's own values: a real token that happens to start the same way is fine.
    expect(loadConfig({ ...http, SLACK_BOT_TOKEN: 'xoxb-your-bot-token-2' }).ok).toBe(true);
  });

  it('a numeric setting that is not a whole number in range is quoted back with its range, never as NaN', () => {
    const problems = (env: Record<string, string>) => {
      const result = loadConfig({ ...http, ...env });
      return result.ok ? [] : result.problems;
    };
    expect(problems({ PORT: 'abc' })).toEqual(["PORT: must be a whole number from 0 to 65535, got 'abc'"]);
    expect(problems({ PORT: '70000' })).toEqual([
      "PORT: must be a whole number from 0 to 65535, got '70000'",
    ]);
    expect(problems({ RUN_LEASE_MS: '5s' })).toEqual([
      "RUN_LEASE_MS: must be a whole number of milliseconds from 1000 to 30000, got '5s'",
    ]);
    expect(problems({ SHUTDOWN_GRACE_MS: '-1' })).toEqual([
      "SHUTDOWN_GRACE_MS: must be a whole number of milliseconds of at least 0, got '-1'",
    ]);
    // Every numeric setting: what Number() would take or turn into NaN is refused by name, quoting the value.
    const numeric = [
      'PORT',
      'OPENAI_TIMEOUT_MS',
      'DATABASE_POOL_SIZE',
      'WORKERS',
      'MAX_ACTIVE_RUNS',
      'RUN_LEASE_MS',
    ];
    numeric.push('AUDIT_WEBHOOK_BATCH', 'AUDIT_WEBHOOK_TIMEOUT_MS', 'OTEL_METRIC_EXPORT_INTERVAL');
    numeric.push('OTEL_BSP_SCHEDULE_DELAY', 'RETENTION_DAYS', 'THREAD_CONTEXT_MESSAGES', 'SHUTDOWN_GRACE_MS');
    numeric.push('TOOL_OUTPUT_MAX_CHARS');
    for (const name of numeric)
      for (const value of ['abc', '1.5', '1e3', '0x10', 'Infinity', '12 ms']) {
        const found = problems({ [name]: value }).filter((p) => p.startsWith(`${name}:`));
        expect(found, `${name}=${value}`).toEqual([
          expect.stringMatching(new RegExp(`^${name}: must be a whole number .*, got '${value}'$`)),
        ]);
        expect(found.join()).not.toContain('NaN');
      }
    expect(problems({ TOOL_OUTPUT_MAX_CHARS: '500' })).toEqual([
      "TOOL_OUTPUT_MAX_CHARS: must be a whole number of characters from 1000 to 1000000, got '500'",
    ]);
    expect(loadConfig(http)).toMatchObject({ ok: true, config: { toolOutputMaxChars: 16_000 } });
    expect(loadConfig({ ...http, PORT: ' 8080 ', RETENTION_DAYS: '90' })).toMatchObject({
      ok: true,
      config: { port: 8080 },
    });
  });

  it('the terminal chat needs no Slack settings', () => {
    expect(loadConfig({ OPENAI_API_KEY: 'sk-1' }, 'chat').ok).toBe(true);
  });

  it('parses admin ids and treats empty strings as unset', () => {
    const result = loadConfig({ ...http, ADMIN_USER_IDS: ' U0123ABC ,W999XYZ,', PORT: '' });
    expect(result.ok && [result.config.adminUserIds, result.config.port]).toEqual([
      ['U0123ABC', 'W999XYZ'],
      3000,
    ]);
  });
});

describe('withDotEnv', () => {
  it('reads .env but lets the process environment win', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dotenv-'));
    writeFileSync(join(dir, '.env'), 'OPENAI_MODEL=from-file\nLOG_LEVEL=debug\n');
    expect(withDotEnv({ OPENAI_MODEL: 'from-env' }, dir)).toMatchObject({
      OPENAI_MODEL: 'from-env',
      LOG_LEVEL: 'debug',
    });
    expect(withDotEnv({ A: '1' }, join(dir, 'missing'))).toEqual({ A: '1' });
  });
});

describe('installs into several workspaces (OAuth mode)', () => {
  const key = Buffer.alloc(32, 7).toString('base64');
  const oauth = {
    SLACK_SIGNING_SECRET: 's',
    OPENAI_API_KEY: 'sk-1',
    SLACK_CLIENT_ID: '1.2',
    SLACK_CLIENT_SECRET: 'secret',
    SLACK_STATE_SECRET: 'x'.repeat(32),
    TOKEN_ENCRYPTION_KEY: key,
  };
  const problems = (env: Record<string, string>) => {
    const result = loadConfig(env);
    return result.ok ? [] : result.problems;
  };

  it('is chosen when the client ID and secret and a state secret are set and no bot token is', () => {
    const result = loadConfig(oauth);
    if (!result.ok) throw new Error(result.problems.join());
    expect(result.config.slack.oauth).toEqual({
      clientId: '1.2',
      clientSecret: 'secret',
      stateSecret: 'x'.repeat(32),
      tokenKeys: { current: Buffer.alloc(32, 7), previous: undefined },
    });
    // Sign in with Slack on the console keeps working with the same credentials.
    expect(result.config.console.slackSignIn).toEqual({ clientId: '1.2', clientSecret: 'secret' });
    // With a bot token, nothing changes: single-token mode.
    const single = loadConfig(http);
    expect(single.ok && single.config.slack.oauth).toBeUndefined();
  });

  it('names every setting a half-configured OAuth still needs', () => {
    const { SLACK_CLIENT_ID: _, TOKEN_ENCRYPTION_KEY: __, ...half } = oauth;
    expect(problems(half)).toEqual([
      'SLACK_CLIENT_ID: required to install into several workspaces (Basic Information → App Credentials → Client ID)',
      'TOKEN_ENCRYPTION_KEY: required to install into several workspaces (encrypts the stored tokens: 32 bytes in base64, openssl rand -base64 32)',
      'SLACK_CLIENT_ID: required with SLACK_CLIENT_SECRET (Basic Information → App Credentials)',
    ]);
    const { SLACK_STATE_SECRET: ___, ...noState } = oauth;
    expect(problems(noState).join('\n')).toContain(
      'SLACK_STATE_SECRET: required to install into several workspaces',
    );
    // Socket Mode installs into several workspaces too: one app-level token, no signing secret.
    const { SLACK_SIGNING_SECRET: ____, ...overSocket } = { ...oauth, SLACK_APP_TOKEN: 'xapp-1' };
    expect(problems(overSocket)).toEqual([]);
    expect(problems({ ...oauth, SLACK_BOT_TOKEN: 'xoxb-1' })).toEqual([
      'SLACK_STATE_SECRET: set only to install into several workspaces, where SLACK_BOT_TOKEN stays unset (docs/installing.md): unset one of the two',
    ]);
  });

  it('refuses ADMIN_USER_IDS and AUDITOR_USER_IDS: each workspace names its own admins', () => {
    expect(problems({ ...oauth, ADMIN_USER_IDS: 'U0123ABC', AUDITOR_USER_IDS: 'U0456DEF' })).toEqual([
      "ADMIN_USER_IDS: applies to a single bot token; installed into several workspaces, each workspace's admins are its installer and those they add with /approvals admins add (docs/installing.md): unset ADMIN_USER_IDS",
      "AUDITOR_USER_IDS: applies to a single bot token; installed into several workspaces, each workspace's admins are its installer and those they add with /approvals admins add (docs/installing.md): unset AUDITOR_USER_IDS",
    ]);
    expect(problems({ ...http, ADMIN_USER_IDS: 'U0123ABC' })).toEqual([]);
  });

  it('refuses a key that is not 32 bytes of base64, a short state secret, and the same key twice', () => {
    for (const bad of ['short', Buffer.alloc(16).toString('base64'), `${key}!`]) {
      expect(problems({ ...oauth, TOKEN_ENCRYPTION_KEY: bad })).toContain(
        'TOKEN_ENCRYPTION_KEY: must be 32 bytes in base64 (openssl rand -base64 32)',
      );
    }
    expect(problems({ ...oauth, TOKEN_ENCRYPTION_KEY_PREVIOUS: 'nope' })).toContain(
      'TOKEN_ENCRYPTION_KEY_PREVIOUS: must be 32 bytes in base64 (openssl rand -base64 32)',
    );
    expect(problems({ ...oauth, SLACK_STATE_SECRET: 'short' }).join('\n')).toContain(
      'SLACK_STATE_SECRET: must be at least 32 characters',
    );
    expect(problems({ ...oauth, TOKEN_ENCRYPTION_KEY_PREVIOUS: key }).join('\n')).toContain(
      'TOKEN_ENCRYPTION_KEY_PREVIOUS: the same key as TOKEN_ENCRYPTION_KEY',
    );
  });
});
