import { copyFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freePort, REPO_ROOT, runBotProcessToExit, startBotProcess } from '../support/bot-process.js';
import { type FakeSlack, slackReply, startFakeSlack } from '../support/fake-slack.js';

/**
 * `npm start` (the compiled entry point) against the fake Slack: settings Slack does not accept stop the
 * start with one message naming the variable and exit code 1, before the database is opened.
 */
describe('start-up checks that name their cause', () => {
  let slack: FakeSlack;
  let dir: string;
  let dbPath: string;
  beforeEach(async () => {
    slack = await startFakeSlack();
    dir = mkdtempSync(join(tmpdir(), 'bot-startup-'));
    dbPath = join(dir, 'bot.db');
  });
  afterEach(async () => {
    await slack.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const settings = (extra: Record<string, string> = {}) => ({
    SLACK_BOT_TOKEN: 'xoxb-wrong',
    SLACK_SIGNING_SECRET: 'secret',
    SLACK_API_URL: slack.url,
    OPENAI_API_KEY: 'sk-test',
    DATABASE_PATH: dbPath,
    ...extra,
  });

  it('a bot token Slack refuses (HTTP mode): SLACK_BOT_TOKEN is named, exit 1, nothing started', async () => {
    slack.setResponse('auth.test', () => slackReply.error('invalid_auth'));
    const result = await runBotProcessToExit({ env: settings() });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'Slack error: the bot cannot start.\n' +
        '  - SLACK_BOT_TOKEN is not a valid token (Slack answered invalid_auth): copy the Bot User OAuth Token (xoxb-…) from the app settings, OAuth & Permissions (reinstalling the app may change it).\n',
    );
    expect(result.stdout).not.toContain('bot started');
    expect(existsSync(dbPath)).toBe(false);
  });

  it("what the token check's Slack client logs is one JSON line of the bot's log, not a raw [WARN] line", async () => {
    // Slack adds warnings to an answer (response_metadata.warnings); the Web API client logs each one.
    slack.setResponse('auth.test', () =>
      slackReply.error('invalid_auth', { response_metadata: { warnings: ['superfluous_charset'] } }),
    );
    const result = await runBotProcessToExit({ env: settings() });
    expect(result.code).toBe(1);
    expect(result.stderr).not.toContain('[WARN]');
    const [logged, ...rest] = result.stderr.split('\n');
    expect(JSON.parse(logged ?? '')).toMatchObject({
      level: 'warn',
      msg: expect.stringMatching(/^superfluous_charset\b/),
      source: 'web-api',
    });
    expect(rest.join('\n')).toBe(
      'Slack error: the bot cannot start.\n' +
        '  - SLACK_BOT_TOKEN is not a valid token (Slack answered invalid_auth): copy the Bot User OAuth Token (xoxb-…) from the app settings, OAuth & Permissions (reinstalling the app may change it).\n',
    );
  });

  it('an app-level token Slack refuses (Socket Mode): SLACK_APP_TOKEN is named, exit 1', async () => {
    slack.setResponse('apps.connections.open', () => slackReply.error('invalid_auth'));
    const result = await runBotProcessToExit({ env: settings({ SLACK_APP_TOKEN: 'xapp-wrong' }) });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      '  - SLACK_APP_TOKEN is not a valid token (Slack answered invalid_auth): generate an app-level token (xapp-…) with the connections:write scope',
    );
    expect(result.stderr).not.toContain('SLACK_BOT_TOKEN');
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(slack.callsTo('auth.test')).toHaveLength(1);
  });

  it('a bot token Slack accepts is asked about once: Bolt is given the answer instead of its own auth.test', async () => {
    const bot = await startBotProcess({ env: settings({ OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' }) });
    try {
      expect(slack.callsTo('auth.test')).toHaveLength(1);
      // No ADMIN_USER_IDS, as .env.example ships it: the tools only admins may decide are named at start-up.
      expect(bot.output()).toContain(
        'ADMIN_USER_IDS is empty, so nobody can decide requests to run delete_note, post_message (only admins may)',
      );
    } finally {
      await bot.kill('SIGTERM');
    }
  });

  it('Slack unreachable: the message says so and names SLACK_API_URL', async () => {
    const closed = `http://127.0.0.1:${await freePort()}/api/`;
    const result = await runBotProcessToExit({ env: settings({ SLACK_API_URL: closed }) });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `SLACK_BOT_TOKEN could not be checked: Slack did not answer at ${closed}`,
    );
    expect(result.stderr).toContain('SLACK_API_URL');
  });

  it('a PostgreSQL server that does not answer: DATABASE_URL is named with what to check, never its password', async () => {
    const result = await runBotProcessToExit({
      env: settings({ DATABASE_URL: 'postgres://u:secret-pw-42@127.0.0.1:1/x' }),
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Database error: the bot cannot start.\n');
    expect(result.stderr).toContain('  - DATABASE_URL (PostgreSQL u@127.0.0.1:1/x) cannot be used (');
    expect(result.stderr).toContain('ECONNREFUSED');
    expect(result.stderr).toContain('check that PostgreSQL runs there');
    expect(result.stdout + result.stderr).not.toContain('secret-pw-42');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('a DATABASE_PATH whose folder cannot be made: the variable is named with what to check', async () => {
    writeFileSync(join(dir, 'not-a-folder'), 'a file');
    const path = join(dir, 'not-a-folder', 'x.db');
    const result = await runBotProcessToExit({ env: settings({ DATABASE_PATH: path }) });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Database error: the bot cannot start.\n');
    expect(result.stderr).toContain(`  - DATABASE_PATH=${path} cannot be opened (`);
    expect(result.stderr).toContain('check that its folder exists or can be created, is a folder');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('.env copied from .env.example and not filled in: each example value is refused by name', async () => {
    copyFileSync(join(REPO_ROOT, '.env.example'), join(dir, '.env'));
    const result = await runBotProcessToExit({ env: { DATABASE_PATH: dbPath }, cwd: dir });
    expect(result.code).toBe(1);
    for (const name of ['SLACK_BOT_TOKEN', 'SLACK_APP_TOKEN', 'OPENAI_API_KEY'])
      expect(result.stderr).toContain(`  - ${name}: still the example value`);
    expect(slack.calls).toHaveLength(0);
  });
});
