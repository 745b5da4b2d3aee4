import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { auditEvent } from '../../src/audit/audit-event.js';
import { checkpointSignatureValid } from '../../src/audit/checkpoint.js';
import { CHECKPOINT_SINK, Checkpointer } from '../../src/audit/checkpointer.js';
import { hashEventV2, payloadDigest } from '../../src/audit/hash-chain.js';
import { runAuditCli } from '../../src/cli/audit-cli.js';
import { createAuditPushStore } from '../../src/db/audit-push-store.js';
import { createCheckpointStore } from '../../src/db/checkpoint-store.js';
import { audit } from '../../src/db/sql/program.js';
import type { SqlDatabase } from '../../src/db/sql/sql-database.js';
import { openSqliteDatabase } from '../../src/db/sqlite/sqlite-database.js';
import { randomId } from '../../src/ids.js';
import { silentLogger } from '../../src/logger.js';
import { DATABASE_KINDS, openTestStores, type TestStores } from '../support/test-database.js';

const HOUR = 3_600_000;

async function writeEvents(db: SqlDatabase, n: number, at: number): Promise<void> {
  await db.write(function* () {
    yield* audit(
      Array.from({ length: n }, (_, i) =>
        auditEvent('approval.reminded', { at, payload: { i, text: `note ${i}` } }),
      ),
    );
  });
}

function checkpointer(
  stores: TestStores['stores'],
  privateKey: KeyObject,
  clock: { now(): number },
  posts?: string[],
) {
  return new Checkpointer({
    store: stores.checkpoints,
    leases: stores.auditPush,
    privateKey,
    clock,
    logger: silentLogger,
    ...(posts
      ? {
          post: async (text: string) => {
            posts.push(text);
            return { channel: 'C0CHECK', ts: `1.${posts.length}` };
          },
        }
      : {}),
  });
}

describe.each(DATABASE_KINDS)('signed checkpoints, on %s', (kind) => {
  let t: TestStores;
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  beforeEach(async () => {
    t = await openTestStores(kind);
  });
  afterEach(async () => t.close());

  it('every 100 events, and at the head once an event waited an hour; posted; one process at a time', async () => {
    let now = Date.parse('2026-06-01T12:00:00Z');
    const clock = { now: () => now };
    const posts: string[] = [];
    const signer = checkpointer(t.stores, privateKey, clock, posts);
    expect(await signer.due()).toBe(false);
    await writeEvents(t.db, 250, now);
    expect(await signer.due()).toBe(true);
    expect((await signer.tick()).map((c) => c.seq)).toEqual([100, 200]);
    // 50 events past the last checkpoint: none due until the three hundredth.
    expect(await signer.due()).toBe(false);
    expect(await signer.tick()).toEqual([]);
    now += HOUR - 1;
    expect(await signer.tick()).toEqual([]);
    now += 1;
    expect((await signer.tick()).map((c) => c.seq)).toEqual([250]);
    // Nothing written since: no new checkpoint however long it waits.
    now += 5 * HOUR;
    expect(await signer.tick()).toEqual([]);

    const all = await t.stores.checkpoints.all();
    expect(all.map((c) => c.seq)).toEqual([100, 200, 250]);
    expect(all.every((c) => checkpointSignatureValid(publicKey, c))).toBe(true);
    expect(posts).toHaveLength(3);
    expect(posts[0]).toContain('Audit checkpoint: event 100 has hash');
    expect(await t.stores.checkpoints.unposted(10)).toEqual([]);

    // Another process signs nothing while this one holds the lease.
    const other = await t.another();
    await writeEvents(t.db, 100, now);
    expect(await checkpointer(other.stores, privateKey, clock).tick()).toEqual([]);
    await signer.stop();
    expect((await checkpointer(other.stores, privateKey, clock).tick()).map((c) => c.seq)).toEqual([300]);
    expect((await other.stores.auditPush.claim(CHECKPOINT_SINK))?.ackedSeq).toBe(0);
  });

  it('at a stop, the head is signed however few events wait; with none waiting, nothing', async () => {
    const clock = { now: () => Date.parse('2026-06-01T12:00:00Z') };
    const signer = checkpointer(t.stores, privateKey, clock);
    await writeEvents(t.db, 146, clock.now());
    expect((await signer.tick({ head: true })).map((c) => c.seq)).toEqual([100, 146]);
    expect(await signer.tick({ head: true })).toEqual([]);
    await signer.stop();
  });
});

describe('npm run audit -- verify --public-key', () => {
  let dir: string;
  let dbPath: string;
  let keyFile: string;
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const cli = async (...argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runAuditCli(
      argv,
      { DATABASE_PATH: dbPath },
      { out: (l) => out.push(l), err: (l) => err.push(l), now: () => Date.now() },
    );
    return { code, out, err };
  };
  /** The attacker: plain SQLite, the append-only triggers dropped. */
  const tamper = (work: (raw: Database.Database) => void) => {
    const raw = new Database(dbPath);
    raw.exec('DROP TRIGGER IF EXISTS audit_events_no_update; DROP TRIGGER IF EXISTS audit_events_no_delete;');
    work(raw);
    raw.close();
  };

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'audit-checkpoints-'));
    dbPath = join(dir, 'bot.db');
    keyFile = join(dir, 'public.pem');
    writeFileSync(keyFile, publicKey.export({ type: 'spki', format: 'pem' }));
    const db = openSqliteDatabase(dbPath);
    const ctx = {
      db,
      clock: { now: () => Date.now() },
      newId: randomId,
      owner: 'owner-1',
      leaseMs: 30_000,
      ownerIsGone: () => false,
    };
    await writeEvents(db, 250, Date.now());
    const signer = new Checkpointer({
      store: createCheckpointStore(db),
      leases: createAuditPushStore(ctx),
      privateKey,
      clock: ctx.clock,
      logger: silentLogger,
    });
    expect((await signer.tick()).map((c) => c.seq)).toEqual([100, 200]);
    await db.close();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('passes on an intact log and says how much the checkpoints cover', async () => {
    const run = await cli('verify', '--public-key', keyFile);
    expect(run.err).toEqual([]);
    expect(run.code).toBe(0);
    expect(run.out[0]).toMatch(/^250 events, chain intact/);
    expect(run.out[1]).toMatch(
      /^2 checkpoints verified \(key [0-9a-f]{16}\); the latest certifies event 200 \(.*\); 50 events after it not yet covered$/,
    );
  });

  it('catches a log cut after a checkpoint, which the chain alone cannot show', async () => {
    tamper((raw) => raw.exec('DELETE FROM audit_events WHERE seq > 150'));
    expect((await cli('verify')).code).toBe(0);
    const run = await cli('verify', '--public-key', keyFile);
    expect(run.code).toBe(1);
    expect(run.err).toEqual([
      expect.stringMatching(
        /^The log was cut off: it ends at event 150, but the checkpoint of event 200 \(signed .*\) certifies event 200\.$/,
      ),
    ]);
  });

  it('catches a log re-chained from an edited event to its end, naming the checkpoint it contradicts', async () => {
    tamper((raw) => {
      const rows = raw.prepare('SELECT * FROM audit_events WHERE seq >= 120 ORDER BY seq').all() as Record<
        string,
        string | number | null
      >[];
      let prevHash = String(rows[0]?.prev_hash);
      const update = raw.prepare(
        'UPDATE audit_events SET payload = ?, prev_hash = ?, hash = ?, payload_digest = ? WHERE seq = ?',
      );
      for (const r of rows) {
        const payload =
          r.seq === 120 ? { i: 119, text: 'nothing happened here' } : JSON.parse(String(r.payload));
        const digest = payloadDigest(payload);
        const hash = hashEventV2(prevHash, Number(r.seq), {
          at: Number(r.at),
          actor: String(r.actor),
          kind: String(r.kind),
          teamId: null,
          conversationId: null,
          runId: null,
          approvalId: null,
          payloadDigest: digest,
        });
        update.run(JSON.stringify(payload), prevHash, hash, digest, r.seq);
        prevHash = hash;
      }
    });
    expect((await cli('verify')).code).toBe(0);
    const run = await cli('verify', '--public-key', keyFile);
    expect(run.code).toBe(1);
    expect(run.err).toEqual([
      expect.stringMatching(
        /^The log was re-chained: event 200 no longer has the hash the checkpoint of event 200 \(signed .*\) certifies \([0-9a-f]{12}…\); an event after event 100 \(the last checkpoint that still holds\) was edited and the hashes after it recomputed\.$/,
      ),
    ]);
  });

  it('refuses a forged checkpoint and a checkpoint of another key', async () => {
    tamper((raw) => raw.exec(`UPDATE audit_checkpoints SET at = at + 1 WHERE seq = 100`));
    const forged = await cli('verify', '--public-key', keyFile);
    expect(forged.code).toBe(1);
    expect(forged.err[0]).toMatch(/^The checkpoint of event 100 .* has an invalid signature/);
    const otherKey = join(dir, 'other.pem');
    writeFileSync(otherKey, generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }));
    const other = await cli('verify', '--public-key', otherKey);
    expect(other.code).toBe(1);
    expect(other.err).toHaveLength(2);
    expect(other.err[0]).toContain('not by the key given');
  });

  it('explains a missing or wrong key file', async () => {
    expect((await cli('verify', '--public-key', join(dir, 'none.pem'))).err[0]).toContain(
      'Cannot read the public key',
    );
    const rsa = join(dir, 'rsa.pem');
    writeFileSync(
      rsa,
      generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' }),
    );
    const wrong = await cli('verify', '--public-key', rsa);
    expect(wrong.code).toBe(2);
    expect(wrong.err[0]).toContain('checkpoints are signed with Ed25519');
  });
});
