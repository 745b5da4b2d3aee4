import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { auditEvent } from '../../src/audit/audit-event.js';
import { runAuditCli } from '../../src/cli/audit-cli.js';
import { audit } from '../../src/db/sql/program.js';
import { openSqliteDatabase } from '../../src/db/sqlite/sqlite-database.js';
import type { BotProcess } from '../support/bot-process.js';
import { reply } from '../support/fake-openai.js';
import { type FakeSiem, startFakeSiem } from '../support/fake-siem.js';
import { waitUntil } from '../support/wait.js';
import { type ProcessFixture, startProcessFixture } from './process-fixture.js';

const SECRET = 'siem-shared-secret-0123456789';

interface Health {
  auditWebhook?: { events: number; seconds: number; ackedSeq: number; attempts: number; lastError?: string };
}

const health = async (bot: BotProcess): Promise<Health> =>
  (await fetch(`${bot.url}/healthz`)).json() as Promise<Health>;

describe('audit events pushed to a SIEM by the real entry point', () => {
  let f: ProcessFixture;
  let siem: FakeSiem;
  beforeEach(async () => {
    f = await startProcessFixture();
    siem = await startFakeSiem(SECRET);
  });
  afterEach(async () => {
    await f.close();
    await siem.close();
  });

  it('every event arrives in order, signed, across 500s, a timeout and a SIGKILL restart', async () => {
    const env = {
      AUDIT_WEBHOOK_URL: siem.url,
      AUDIT_WEBHOOK_SECRET: SECRET,
      AUDIT_WEBHOOK_TIMEOUT_MS: '500',
      // The lag is one of the details /healthz gives when asked to.
      HEALTHZ_DETAILS: 'true',
    };
    siem.answer(500);
    let bot = await f.start(env);
    f.model.enqueue(
      reply.raw(
        200,
        JSON.stringify({
          id: 'chatcmpl-1',
          object: 'chat.completion',
          created: 1,
          model: 'gpt-test',
          choices: [
            { index: 0, message: { role: 'assistant', content: 'First answer.' }, finish_reason: 'stop' },
          ],
          usage: { prompt_tokens: 1200, completion_tokens: 345, total_tokens: 1545 },
        }),
        { 'content-type': 'application/json' },
      ),
    );
    await f.mention(bot, 'hello');
    await f.waitForText((text) => text === 'First answer.');
    // The SIEM fails: the bot answered anyway, and /healthz shows the events waiting and the failures.
    await waitUntil(async () => siem.requests.length >= 3, { timeoutMs: 10_000 });
    const failing = (await health(bot)).auditWebhook;
    expect(failing?.events).toBeGreaterThanOrEqual(3);
    expect(failing?.attempts).toBeGreaterThanOrEqual(1);
    expect(failing?.lastError).toBe('HTTP 500');
    siem.answer('hang');
    await waitUntil(() => siem.requests.some((r) => r.status === 0), { timeoutMs: 10_000 });
    // A crash while nothing was acknowledged: the next process starts from the cursor in the database.
    expect(await bot.kill('SIGKILL')).toBeNull();
    siem.answer(200);
    bot = await f.start(env);
    f.model.enqueue(reply.text('Second answer.'));
    await f.mention(bot, 'again');
    await f.waitForText((text) => text === 'Second answer.');

    const stored = await f.query('SELECT seq, hash FROM audit_events ORDER BY seq');
    const head = Number(stored.at(-1)?.seq);
    await waitUntil(async () => (await health(bot)).auditWebhook?.events === 0, { timeoutMs: 15_000 });
    const settled = (await health(bot)).auditWebhook;
    expect(settled).toMatchObject({ events: 0, seconds: 0, ackedSeq: head, attempts: 0 });

    expect(siem.requests.every((r) => r.signatureOk)).toBe(true);
    // Each request continues where the last accepted one ended (or repeats it): nothing skipped, in order.
    let acked = 0;
    for (const request of siem.requests) {
      const seqs = request.events.map((e) => Number(e.seq));
      expect(seqs).toEqual(seqs.map((_, i) => (seqs[0] ?? 0) + i));
      expect(seqs[0]).toBe(acked + 1);
      if (request.status === 200) acked = seqs.at(-1) ?? acked;
    }
    const accepted = siem.accepted();
    expect(accepted.map((e) => Number(e.seq))).toEqual(stored.map((r) => Number(r.seq)));
    expect(accepted.map((e) => e.hash)).toEqual(stored.map((r) => r.hash));
    // The run's token counts reach the SIEM (they are not mistaken for secrets).
    const completed = accepted.filter((e) => e.kind === 'run.completed').map((e) => e.payload);
    expect(completed[0]).toMatchObject({
      usage: { promptTokens: 1200, completionTokens: 345, totalTokens: 1545 },
    });
    expect(completed).toHaveLength(2);
    await bot.kill('SIGTERM');
  }, 60_000);

  it('without AUDIT_WEBHOOK_SECRET the bot does not start, and says why', async () => {
    const { runBotProcessToExit } = await import('../support/bot-process.js');
    const result = await runBotProcessToExit({ env: { ...f.env, AUDIT_WEBHOOK_URL: siem.url } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('AUDIT_WEBHOOK_SECRET: required with AUDIT_WEBHOOK_URL');
    expect(siem.requests).toEqual([]);
  });
});

describe('signed checkpoints by the real entry point', () => {
  let f: ProcessFixture;
  beforeEach(async () => {
    f = await startProcessFixture();
  });
  afterEach(async () => f.close());

  it('signs the hundredth event at start-up, posts it to the channel, and verify checks it', async () => {
    const db = openSqliteDatabase(f.dbPath);
    await db.write(function* () {
      yield* audit(
        Array.from({ length: 120 }, (_, i) =>
          auditEvent('approval.reminded', { at: Date.now(), payload: { i } }),
        ),
      );
    });
    await db.close();
    const dir = mkdtempSync(join(tmpdir(), 'audit-key-'));
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    writeFileSync(join(dir, 'key.pem'), privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    writeFileSync(join(dir, 'key.pub.pem'), publicKey.export({ type: 'spki', format: 'pem' }));
    const bot = await f.start({
      AUDIT_SIGNING_KEY: join(dir, 'key.pem'),
      AUDIT_CHECKPOINT_CHANNEL: 'C0CHECK',
    });
    const post = await f.slack.waitForCall('chat.postMessage', (call) => call.params.channel === 'C0CHECK');
    expect(String(post.params.text)).toContain('Audit checkpoint: event 100 has hash');
    await waitUntil(
      async () => (await f.query('SELECT posted_ts FROM audit_checkpoints WHERE seq = 100'))[0]?.posted_ts,
      {
        timeoutMs: 5000,
      },
    );
    await bot.kill('SIGTERM');
    const out: string[] = [];
    const code = await runAuditCli(
      ['verify', '--public-key', join(dir, 'key.pub.pem')],
      { DATABASE_PATH: f.dbPath },
      {
        out: (l) => out.push(l),
        err: (l) => out.push(l),
        now: () => Date.now(),
      },
    );
    // Event 100 while running, and the head at the graceful stop.
    const head = Number((await f.query('SELECT max(seq) AS seq FROM audit_events'))[0]?.seq);
    expect(out[1]).toMatch(new RegExp(`^2 checkpoints verified .* the latest certifies event ${head} `));
    expect(code).toBe(0);
    rmSync(dir, { recursive: true, force: true });
  });
});

/** An Ed25519 key pair in files, as an operator makes it with openssl. */
function signingKeyFiles(): { dir: string; key: string; publicKey: string } {
  const dir = mkdtempSync(join(tmpdir(), 'audit-key-'));
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  writeFileSync(join(dir, 'key.pem'), privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  writeFileSync(join(dir, 'key.pub.pem'), publicKey.export({ type: 'spki', format: 'pem' }));
  return { dir, key: join(dir, 'key.pem'), publicKey: join(dir, 'key.pub.pem') };
}

/** Writes `count` events to the chain from outside the bot, as another process of it would. */
async function writeEvents(dbPath: string, count: number): Promise<void> {
  const db = openSqliteDatabase(dbPath);
  await db.write(function* () {
    yield* audit(
      Array.from({ length: count }, (_, i) =>
        auditEvent('approval.reminded', { at: Date.now(), payload: { i } }),
      ),
    );
  });
  await db.close();
}

async function verifyWithKey(dbPath: string, publicKey: string): Promise<{ code: number; out: string[] }> {
  const out: string[] = [];
  const code = await runAuditCli(
    ['verify', '--public-key', publicKey],
    { DATABASE_PATH: dbPath },
    { out: (l) => out.push(l), err: (l) => out.push(l), now: () => Date.now() },
  );
  return { code, out };
}

describe('checkpoints signed as events are written and at a graceful stop', () => {
  let f: ProcessFixture;
  let keys: ReturnType<typeof signingKeyFiles>;
  beforeEach(async () => {
    f = await startProcessFixture();
    keys = signingKeyFiles();
  });
  afterEach(async () => {
    await f.close();
    rmSync(keys.dir, { recursive: true, force: true });
  });

  const checkpoints = async () =>
    (await f.query('SELECT seq FROM audit_checkpoints ORDER BY seq')).map((r) => Number(r.seq));

  it('the hundredth event is signed within seconds, not at the next one-minute tick', async () => {
    const bot = await f.start({ AUDIT_SIGNING_KEY: keys.key });
    // The signer's first look at the chain, at start-up, has happened (it took the signing lease).
    await waitUntil(
      async () => (await f.query("SELECT name FROM audit_cursors WHERE name = 'checkpoint'")).length > 0,
      { timeoutMs: 10_000 },
    );
    expect(await checkpoints()).toEqual([]);
    const before = Date.now();
    await writeEvents(f.dbPath, 120);
    await waitUntil(async () => (await checkpoints()).includes(100), { timeoutMs: 5_000 });
    expect(Date.now() - before).toBeLessThan(5_000);
    expect(await checkpoints()).toEqual([100]);
    expect(await bot.kill('SIGTERM')).toBe(0);
  }, 60_000);

  it.each(['1', '0'])(
    'WORKERS=%s: 146 events then SIGTERM leave checkpoints of event 100 and of the head; a log cut to 73 fails verify',
    async (workers) => {
      const bot = await f.start({ AUDIT_SIGNING_KEY: keys.key, WORKERS: workers });
      await writeEvents(f.dbPath, 145);
      expect(await bot.kill('SIGTERM')).toBe(0);
      const head = Number((await f.query('SELECT max(seq) AS seq FROM audit_events'))[0]?.seq);
      expect(head).toBeGreaterThanOrEqual(146);
      expect(await checkpoints()).toEqual([100, head]);
      expect((await verifyWithKey(f.dbPath, keys.publicKey)).code).toBe(0);
      // Whoever can write the file cuts the log back to event 73 (the append-only trigger dropped first).
      const raw = new Database(f.dbPath);
      raw.exec('DROP TRIGGER audit_events_no_delete; DELETE FROM audit_events WHERE seq > 73;');
      raw.close();
      const cut = await verifyWithKey(f.dbPath, keys.publicKey);
      expect(cut.code).toBe(1);
      expect(cut.out.join('\n')).toContain(
        'The log was cut off: it ends at event 73, but the checkpoint of event 100',
      );
    },
    60_000,
  );
});

describe('retention by the real entry point', () => {
  let f: ProcessFixture;
  beforeEach(async () => {
    f = await startProcessFixture();
  });
  afterEach(async () => f.close());

  it('RETENTION_DAYS prunes old content at start-up; the chain still verifies', async () => {
    const old = Date.now() - 40 * 86_400_000;
    const db = openSqliteDatabase(f.dbPath);
    await db.write(function* () {
      yield* audit([
        auditEvent('approval.refused', {
          at: old,
          actor: 'U3',
          payload: { tool: 'delete_note', reason: 'not yours' },
        }),
      ]);
    });
    await db.close();
    const bot = await f.start({ RETENTION_DAYS: '30' });
    const [pruned] = await waitUntil(
      async () => {
        const found = await f.query("SELECT payload FROM audit_events WHERE kind = 'audit.pruned'");
        return found.length > 0 ? found : undefined;
      },
      { timeoutMs: 10_000 },
    );
    expect(JSON.parse(String(pruned?.payload))).toMatchObject({ limit: 'RETENTION_DAYS=30', events: 1 });
    const [refused] = await f.query("SELECT payload FROM audit_events WHERE kind = 'approval.refused'");
    expect(JSON.parse(String(refused?.payload))).toMatchObject({
      tool: 'delete_note',
      reason: { $digest: expect.any(String) },
    });
    await bot.kill('SIGTERM');
    const out: string[] = [];
    const code = await runAuditCli(
      ['verify'],
      { DATABASE_PATH: f.dbPath },
      { out: (l) => out.push(l), err: (l) => out.push(l), now: () => Date.now() },
    );
    expect(out[0]).toMatch(/events, chain intact/);
    expect(code).toBe(0);
  });
});

describe.each(['sqlite', 'postgres'] as const)('two bot processes pushing to one SIEM, on %s', (kind) => {
  let f: ProcessFixture;
  let siem: FakeSiem;
  beforeEach(async () => {
    f = await startProcessFixture({ kind });
    siem = await startFakeSiem(SECRET);
  });
  afterEach(async () => {
    await f.close();
    await siem.close();
  });

  it('one pushes at a time: every event once, in order; after a SIGKILL the other carries on', async () => {
    const env = { AUDIT_WEBHOOK_URL: siem.url, AUDIT_WEBHOOK_SECRET: SECRET };
    const a = await f.start(env);
    const b = await f.start(env);
    f.model.enqueue(reply.text('From A.'), reply.text('From B.'));
    await f.mention(a, 'hello A');
    await f.waitForText((text) => text === 'From A.');
    await f.mention(b, 'hello B');
    await f.waitForText((text) => text === 'From B.');
    const head = async () => Number((await f.query('SELECT max(seq) AS seq FROM audit_events'))[0]?.seq);
    const first = await head();
    await waitUntil(() => siem.accepted().length >= first, { timeoutMs: 10_000 });
    // No failure, no handover: nobody sent a batch twice.
    expect(siem.accepted().map((e) => Number(e.seq))).toEqual(Array.from({ length: first }, (_, i) => i + 1));

    await a.kill('SIGKILL');
    f.model.enqueue(reply.text('B again.'));
    await f.mention(b, 'still there?');
    await f.waitForText((text) => text === 'B again.');
    const last = await head();
    await waitUntil(() => new Set(siem.accepted().map((e) => e.seq)).size === last, { timeoutMs: 15_000 });
    const seqs = siem.accepted().map((e) => Number(e.seq));
    // At least once: a batch A had sent but not recorded may come again; never out of order, nothing skipped.
    for (let i = 1; i < seqs.length; i += 1) expect(seqs[i] ?? 0).toBeLessThanOrEqual((seqs[i - 1] ?? 0) + 1);
    expect([...new Set(seqs)]).toEqual(Array.from({ length: last }, (_, i) => i + 1));
    await b.kill('SIGTERM');
  }, 60_000);
});
