import { chmodSync, existsSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BotProcess } from '../support/bot-process.js';
import { reply } from '../support/fake-openai.js';
import { withAdmin } from '../support/postgres-admin.js';
import { appMentionEvent, eventEnvelope, nextTs, postEvent } from '../support/slack-requests.js';
import { waitUntil } from '../support/wait.js';
import { SECRET } from './harness.js';
import { type ProcessFixture, startProcessFixture } from './process-fixture.js';

interface Health {
  status: string;
  database?: string;
  workers?: number;
}

const health = async (bot: BotProcess): Promise<{ code: number; body: Health }> => {
  const res = await fetch(`${bot.url}/healthz`);
  return { code: res.status, body: (await res.json()) as Health };
};

/** Waits until /healthz answers `code`, and returns what it said. */
const healthBecomes = (bot: BotProcess, code: number) =>
  waitUntil(
    async () => {
      const answer = await health(bot);
      return answer.code === code ? answer.body : undefined;
    },
    { timeoutMs: 10_000, message: `expected /healthz to answer ${code}; ${bot.output().slice(-1500)}` },
  );

/**
 * Waits until both worker threads (the run worker and the console's, with the default WORKERS=1) have opened
 * their connections, so that the changes below are made to a file no thread is still opening.
 */
const workerReady = (bot: BotProcess) =>
  waitUntil(async () => (await health(bot)).body.workers === 2, { timeoutMs: 30_000 });

/**
 * `/healthz` reports the database, probed for writes (a read-only or removed SQLite file, a read-only
 * PostgreSQL database), and while it fails Slack's events are refused with 503 so that Slack delivers them
 * again, instead of being accepted and lost.
 */
describe('the database in /healthz and in front of Slack events (SQLite)', () => {
  let f: ProcessFixture;
  beforeEach(async () => {
    f = await startProcessFixture();
  });
  afterEach(async () => {
    if (existsSync(dirname(f.dbPath))) chmodSync(dirname(f.dbPath), 0o700);
    await f.close();
  });

  it('a read-only file: 503 and events refused; writable again: 200 and the redelivered event answered', async () => {
    const bot = await f.start({ HEALTHZ_DETAILS: 'true' });
    await workerReady(bot);
    expect(await health(bot)).toEqual({ code: 200, body: expect.objectContaining({ database: 'ok' }) });
    chmodSync(f.dbPath, 0o400);
    const failing = await healthBecomes(bot, 503);
    expect(failing).toMatchObject({ status: 'unavailable', database: expect.stringContaining('read-only') });
    // The same delivery, as Slack sends it again after an error status.
    const envelope = eventEnvelope(
      appMentionEvent({ user: 'U1', channel: 'C1', text: '<@UBOT> hi', ts: nextTs() }),
    );
    const url = `${bot.url}/slack/events`;
    expect((await postEvent(url, SECRET, envelope)).status).toBe(503);
    expect(f.slack.callsTo('chat.postMessage')).toHaveLength(0);
    chmodSync(f.dbPath, 0o600);
    await healthBecomes(bot, 200);
    f.model.enqueue(reply.text('Hello again.'));
    const retried = await postEvent(url, SECRET, envelope, {
      'x-slack-retry-num': '1',
      'x-slack-retry-reason': 'http_error',
    });
    expect(retried.status).toBe(200);
    await f.waitForText((text) => text === 'Hello again.');
    expect(await bot.kill('SIGTERM')).toBe(0);
  }, 60_000);

  it('a folder made read-only, then removed with the file: 503 with the cause in the details', async () => {
    const bot = await f.start({ HEALTHZ_DETAILS: 'true' });
    await workerReady(bot);
    chmodSync(dirname(f.dbPath), 0o500);
    expect(await healthBecomes(bot, 503)).toMatchObject({ database: expect.stringContaining('folder') });
    chmodSync(dirname(f.dbPath), 0o700);
    await healthBecomes(bot, 200);
    rmSync(dirname(f.dbPath), { recursive: true, force: true });
    // Removed, or replaced by a new empty file if anything opened the path again since: either way not this one.
    expect(await healthBecomes(bot, 503)).toMatchObject({
      database: expect.stringMatching(/removed|replaced/),
    });
  }, 60_000);

  it('without HEALTHZ_DETAILS only the status is shown, still 503', async () => {
    // One thread: no worker opening the file after the change.
    const bot = await f.start({ WORKERS: '0' });
    chmodSync(f.dbPath, 0o400);
    expect(await healthBecomes(bot, 503)).toEqual({ status: 'unavailable' });
  }, 60_000);
});

describe('the database in /healthz and in front of Slack events (PostgreSQL)', () => {
  let f: ProcessFixture;
  beforeEach(async () => {
    f = await startProcessFixture({ kind: 'postgres' });
  });
  afterEach(async () => f.close());

  /** Sets the database read-only (or not) for new sessions, and ends the bot's sessions so it reconnects. */
  const readOnly = async (on: boolean) => {
    if (f.database.kind !== 'postgres') throw new Error('PostgreSQL only');
    await withAdmin(f.database.url, async (admin) => {
      // This session may itself have started read-only.
      await admin.query('set default_transaction_read_only = off');
      const name = (await admin.query<{ db: string }>('select current_database() as db')).rows[0]?.db;
      await admin.query(
        on
          ? `alter database "${name}" set default_transaction_read_only = on`
          : `alter database "${name}" reset default_transaction_read_only`,
      );
      await admin.query(
        'select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
      );
    });
  };

  it('a read-only database: 503 and events refused; writable again: 200', async () => {
    const bot = await f.start({ HEALTHZ_DETAILS: 'true' });
    await healthBecomes(bot, 200);
    await readOnly(true);
    expect(await healthBecomes(bot, 503)).toMatchObject({ database: 'the database is read-only' });
    const envelope = eventEnvelope(
      appMentionEvent({ user: 'U1', channel: 'C1', text: '<@UBOT> hi', ts: nextTs() }),
    );
    expect((await postEvent(`${bot.url}/slack/events`, SECRET, envelope)).status).toBe(503);
    await readOnly(false);
    await healthBecomes(bot, 200);
    expect(await bot.kill('SIGTERM')).toBe(0);
  }, 60_000);
});
