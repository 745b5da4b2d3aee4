import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, withDotEnv } from '../../src/config.js';

const http = { SLACK_BOT_TOKEN: 'xoxb-1', SLACK_SIGNING_SECRET: 's', OPENAI_API_KEY: 'sk-1' };

describe('loadConfig', () => {
  it('applies the documented defaults and picks HTTP mode without an app token', () => {
    const result = loadConfig(http);
    if (!result.ok) throw new Error(result.problems.join());
    expect(result.config).toMatchObject({
      port: 3000,
      databasePath: './data/bot.db',
      adminUserIds: [],
      logLevel: 'info',
      slack: { apiUrl: 'https://slack.com/api/', mode: { kind: 'http', signingSecret: 's' } },
    });
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
