import { describe, expect, it } from 'vitest';
import { auditEvent, type StoredAuditEvent } from '../../src/audit/audit-event.js';
import { csvCell } from '../../src/audit/audit-export.js';
import { GENESIS_HASH, hashEvent } from '../../src/audit/hash-chain.js';
import { parseTimePoint } from '../../src/audit/time-filter.js';
import { verifyChain, verifyChainInBatches } from '../../src/audit/verify-chain.js';
import { redactValue } from '../../src/redact.js';

function chain(count: number): StoredAuditEvent[] {
  const events: StoredAuditEvent[] = [];
  let prevHash = GENESIS_HASH;
  for (let seq = 1; seq <= count; seq += 1) {
    const input = auditEvent('run.started', { at: 1000 * seq, actor: `U${seq}00`, payload: { n: seq } });
    const hash = hashEvent(prevHash, seq, input);
    events.push({ ...input, seq, prevHash, hash });
    prevHash = hash;
  }
  return events;
}

describe('verifyChain', () => {
  it('accepts an intact chain and an empty one', () => {
    expect(verifyChain(chain(4))).toMatchObject({ ok: true, count: 4 });
    expect(verifyChain([])).toEqual({ ok: true, count: 0, headHash: GENESIS_HASH });
  });

  it('names the first edited event, whatever field changed', () => {
    for (const edit of [
      { actor: 'U999' },
      { kind: 'approval.approved' },
      { payload: { n: 99 } },
      { at: 1 },
    ]) {
      const events = chain(4);
      events[2] = { ...(events[2] as StoredAuditEvent), ...edit };
      expect(verifyChain(events)).toMatchObject({ ok: false, seq: 3, problem: 'edited' });
    }
  });

  it('names a deleted first event', () => {
    expect(verifyChain(chain(3).slice(1))).toMatchObject({ ok: false, seq: 1, problem: 'deleted' });
  });

  it('names an event moved to the end', () => {
    const events = chain(4);
    const moved = { ...(events[1] as StoredAuditEvent), seq: 5 };
    const verdict = verifyChain([events[0], events[2], events[3], moved].filter((e) => e !== undefined));
    expect(verdict).toMatchObject({ ok: false, seq: 3, problem: 'reordered' });
  });
});

describe('verifyChainInBatches', () => {
  /** A reader over `events` as the store answers, counting the reads and the largest batch in hand. */
  function reader(events: StoredAuditEvent[]) {
    const seen = { reads: 0, whole: 0, largest: 0 };
    const read = async (range?: { afterSeq: number; limit: number }) => {
      seen.reads += 1;
      if (!range) {
        seen.whole += 1;
        return events;
      }
      const batch = events.filter((e) => e.seq > range.afterSeq).slice(0, range.limit);
      seen.largest = Math.max(seen.largest, batch.length);
      return batch;
    };
    return { read, seen };
  }
  const pause = async () => {};

  it('gives the verdict verifyChain gives, reading a batch at a time while the chain holds', async () => {
    const events = chain(25);
    const { read, seen } = reader(events);
    expect(await verifyChainInBatches(read, pause, 10)).toEqual(verifyChain(events));
    expect(seen).toEqual({ reads: 3, whole: 0, largest: 10 });
    expect(await verifyChainInBatches(reader([]).read, pause, 10)).toEqual(verifyChain([]));
  });

  it('names what was done to a broken chain exactly as verifyChain does', async () => {
    const edited = chain(25);
    edited[17] = { ...(edited[17] as StoredAuditEvent), actor: 'U999' };
    const deleted = chain(25).filter((e) => e.seq !== 12);
    const moved = chain(25);
    const last = { ...(moved[4] as StoredAuditEvent), seq: 26 };
    const reordered = [...moved.filter((e) => e.seq !== 5), last];
    for (const events of [edited, deleted, reordered]) {
      const { read, seen } = reader(events);
      const verdict = await verifyChainInBatches(read, pause, 10);
      expect(verdict.ok).toBe(false);
      expect(verdict).toEqual(verifyChain(events));
      expect(seen.whole).toBe(1);
    }
  });
});

describe('csvCell', () => {
  it('neutralises cells a spreadsheet would run as formulas', () => {
    expect(csvCell('=1+2')).toBe("'=1+2");
    expect(csvCell('+1')).toBe("'+1");
    expect(csvCell('-2')).toBe("'-2");
    expect(csvCell('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvCell('=A1,"x"')).toBe(`"'=A1,""x"""`);
    expect(csvCell('plain')).toBe('plain');
  });
});

describe('redaction of audit payloads', () => {
  it('removes secret keys and credential-looking values from arguments', () => {
    const event = auditEvent('approval.requested', {
      at: 1,
      payload: {
        arguments: {
          text: 'use xoxb-123456789012-abcdefABCDEF please',
          api_key: 'plain',
          nested: { password: 'p' },
        },
      },
    });
    const text = JSON.stringify(event.payload);
    expect(text).not.toContain('xoxb-123456789012');
    expect(text).not.toContain('plain');
    expect(event.payload).toEqual(
      redactValue({ arguments: { text: 'use [redacted] please', api_key: 'x', nested: { password: 'x' } } }),
    );
  });
});

describe('parseTimePoint', () => {
  const now = Date.parse('2026-06-01T00:00:00Z');
  it('reads spans back from now and ISO dates', () => {
    expect(parseTimePoint('7d', now)).toBe(now - 7 * 86_400_000);
    expect(parseTimePoint('12h', now)).toBe(now - 12 * 3_600_000);
    expect(parseTimePoint('2w', now)).toBe(now - 14 * 86_400_000);
    expect(parseTimePoint('2026-05-01', now)).toBe(Date.parse('2026-05-01'));
    expect(parseTimePoint('yesterday', now)).toBeUndefined();
    expect(parseTimePoint('7y', now)).toBeUndefined();
  });
});
