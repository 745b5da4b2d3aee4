import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { auditEvent } from '../../src/audit/audit-event.js';
import { AuditPusher, WEBHOOK_SINK } from '../../src/audit/audit-push.js';
import { audit } from '../../src/db/sql/program.js';
import { silentLogger } from '../../src/logger.js';
import { type FakeSiem, startFakeSiem } from '../support/fake-siem.js';
import { DATABASE_KINDS, openTestStores, type TestStores } from '../support/test-database.js';
import { waitUntil } from '../support/wait.js';

const SECRET = 'siem-shared-secret-0123456789';

async function writeEvents(t: TestStores, n: number, from = 0, padding = 0): Promise<void> {
  const events = Array.from({ length: n }, (_, i) =>
    auditEvent('approval.reminded', {
      at: Date.now(),
      payload: { n: from + i, text: `event ${from + i}${'.'.repeat(padding)}` },
    }),
  );
  for (let i = 0; i < events.length; i += 200) {
    await t.db.write(function* () {
      yield* audit(events.slice(i, i + 200));
    });
  }
}

describe.each(DATABASE_KINDS)('pushing the audit log to a SIEM, on %s', (kind) => {
  let t: TestStores;
  let siem: FakeSiem;
  const pushers: AuditPusher[] = [];
  const pusher = (stores: TestStores, batchSize = 100, maxBytes = 1_048_576, logger = silentLogger) => {
    const p = new AuditPusher({
      store: stores.stores.auditPush,
      webhook: { url: siem.url, secret: SECRET, batchSize, timeoutMs: 2000, maxBytes },
      clock: { now: () => Date.now() },
      logger,
      pollMs: 20,
      retryBaseMs: 20,
      retryMaxMs: 100,
    });
    pushers.push(p);
    return p;
  };
  beforeEach(async () => {
    t = await openTestStores(kind);
    siem = await startFakeSiem(SECRET);
  });
  afterEach(async () => {
    for (const p of pushers.splice(0)) await p.stop();
    await siem.close();
    await t.close();
  });

  it('two processes: one pushes at a time, the other takes over when it stops, nothing is lost', async () => {
    const other = await t.another();
    const [a, b] = [pusher(t, 7), pusher(other, 7)];
    a.start();
    b.start();
    await writeEvents(t, 50);
    await waitUntil(() => siem.accepted().length >= 50, { timeoutMs: 10_000 });
    // One of them held the cursor: no batch was pushed twice, none skipped.
    expect(siem.accepted().map((e) => Number(e.seq))).toEqual(Array.from({ length: 50 }, (_, i) => 1 + i));
    const acked = (seq: number) => async () =>
      (await t.stores.auditPush.state(WEBHOOK_SINK)).ackedSeq === seq;
    await waitUntil(acked(50), { timeoutMs: 5000 });
    await a.stop();
    await b.stop();
    siem.requests.splice(0);
    // Another process (a new pusher) takes over from the acknowledged sequence.
    pusher(other, 7).start();
    await writeEvents(t, 30, 50);
    await waitUntil(acked(80), { timeoutMs: 10_000 });
    expect(siem.accepted().map((e) => Number(e.seq))).toEqual(Array.from({ length: 30 }, (_, i) => 51 + i));
    const state = await t.stores.auditPush.state(WEBHOOK_SINK);
    expect(state).toMatchObject({ headSeq: 80, ackedSeq: 80, oldestWaitingAt: null });
  });

  it('a failing SIEM is retried with backoff; the lag grows, then falls to zero', async () => {
    siem.answer(503);
    const p = pusher(t);
    p.start();
    await writeEvents(t, 5);
    await waitUntil(() => siem.requests.length >= 4, { timeoutMs: 10_000 });
    const waiting = await t.stores.auditPush.state(WEBHOOK_SINK);
    expect(waiting).toMatchObject({ headSeq: 5, ackedSeq: 0, lastError: 'HTTP 503' });
    expect(waiting.attempts).toBeGreaterThanOrEqual(3);
    expect(waiting.oldestWaitingAt).not.toBeNull();
    siem.answer(200);
    await waitUntil(async () => (await t.stores.auditPush.state(WEBHOOK_SINK)).ackedSeq === 5, {
      timeoutMs: 10_000,
    });
    expect(siem.accepted().map((e) => Number(e.seq))).toEqual([1, 2, 3, 4, 5]);
    expect(siem.requests.every((r) => r.signatureOk && r.events[0]?.seq === 1)).toBe(true);
  });

  it('cuts a batch short to AUDIT_WEBHOOK_MAX_BYTES, in order, and sends an event larger than that alone', async () => {
    await writeEvents(t, 40, 0, 5_000);
    await writeEvents(t, 1, 40, 80_000);
    await writeEvents(t, 3, 41);
    pusher(t, 100, 65_536).start();
    await waitUntil(() => siem.accepted().length >= 44, { timeoutMs: 10_000 });
    expect(siem.accepted().map((e) => Number(e.seq))).toEqual(Array.from({ length: 44 }, (_, i) => i + 1));
    const sizes = siem.requests.map((r) => [r.events.length, r.bytes <= 65_536] as const);
    // 12 events of about 5 KB fit in 64 KiB; the large one goes alone, over the bound; the rest follow.
    expect(sizes).toEqual([
      [12, true],
      [12, true],
      [12, true],
      [4, true],
      [1, false],
      [3, true],
    ]);
  });

  it('a receiver that answers 413 gets half as many events until it takes them; one too large alone is named in the log', async () => {
    siem.limitBody(12_000);
    const logged: string[] = [];
    const logger = { ...silentLogger, error: (msg: string) => void logged.push(msg) };
    await writeEvents(t, 20, 0, 2_000);
    await writeEvents(t, 1, 20, 20_000);
    pusher(t, 100, 1_048_576, logger).start();
    await waitUntil(() => siem.accepted().length >= 20, { timeoutMs: 10_000 });
    await waitUntil(() => logged.includes('the audit webhook refuses one event as too large'));
    expect(siem.accepted().map((e) => Number(e.seq))).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    // 21 refused, then 11, 6, 3 and 5 at a time up to the large one, which is tried alone and refused.
    const refused = siem.requests.filter((r) => r.status === 413).map((r) => r.events.length);
    expect(refused.slice(0, 3)).toEqual([21, 11, 6]);
    expect(refused.at(-1)).toBe(1);
    expect(siem.requests.filter((r) => r.status === 200).every((r) => r.bytes <= 12_000)).toBe(true);
    expect((await t.stores.auditPush.state(WEBHOOK_SINK)).ackedSeq).toBe(20);
  });

  it('throughput: 2000 events in batches of 100', async () => {
    await writeEvents(t, 2000);
    const started = performance.now();
    pusher(t).start();
    await waitUntil(() => siem.accepted().length >= 2000, { timeoutMs: 30_000, intervalMs: 5 });
    const ms = performance.now() - started;
    process.stdout.write(
      `[audit push ${kind}] 2000 events in ${Math.round(ms)} ms (${Math.round(2000 / (ms / 1000))} events/s)\n`,
    );
    expect(siem.accepted().map((e) => Number(e.seq))).toEqual(Array.from({ length: 2000 }, (_, i) => i + 1));
  });
});
