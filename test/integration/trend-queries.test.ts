import { describe, expect, it } from 'vitest';
import { waitBucket } from '../../src/approvals/wait-buckets.js';
import { auditEvent } from '../../src/audit/audit-event.js';
import { audit } from '../../src/db/sql/program.js';
import { runEvents, seedApproval } from '../support/audit-seed.js';
import { DATABASE_KINDS, openTestStores } from '../support/test-database.js';

const at = (iso: string) => Date.parse(iso);

describe.each(DATABASE_KINDS)('the charts’ figures on %s', (kind) => {
  it('reads the daily totals by UTC day the same way on both engines, within the window and the workspace', async () => {
    const t = await openTestStores(kind);
    try {
      const seed = (status: 'approved' | 'expired', made: string, teamId = 'T1') =>
        seedApproval(t.db, {
          teamId,
          status,
          createdAt: at(made),
          ...(status === 'approved' ? { decidedBy: 'UADMIN', decidedAt: at(made) + 90_000 } : {}),
        });
      await seed('approved', '2026-03-01T00:00:00Z');
      await seed('approved', '2026-03-01T23:59:59Z');
      await seed('expired', '2026-03-02T00:00:00Z');
      await seed('approved', '2026-03-02T05:00:00Z', 'T2');
      await seed('approved', '2026-03-03T00:00:00Z');
      await t.db.write(function* () {
        yield* audit([
          auditEvent('approval.escalated', { at: at('2026-03-02T01:00:00Z'), teamId: 'T1', payload: {} }),
          ...runEvents('run_1', { user: 'U1', prompt: 5, completion: 7, at: at('2026-03-02T03:00:00Z') }),
        ]);
      });
      const rows = await t.stores.auditQueries.trends({
        teamId: 'T1',
        since: at('2026-03-01T00:00:00Z'),
        until: at('2026-03-02T23:59:59.999Z'),
      });
      const day = (iso: string) => at(iso) / 86_400_000;
      expect([...rows.requestsByDay].sort((a, b) => a.day - b.day)).toEqual([
        { day: day('2026-03-01T00:00:00Z'), status: 'approved', count: 2 },
        { day: day('2026-03-02T00:00:00Z'), status: 'expired', count: 1 },
      ]);
      expect(rows.waits).toEqual([{ tool: 'create_note', bucket: waitBucket(90_000), count: 2 }]);
      expect(rows.tools).toEqual([{ tool: 'create_note', count: 3 }]);
      expect(rows.deadlines).toEqual([
        { day: day('2026-03-02T00:00:00Z'), kind: 'approval.escalated', count: 1 },
      ]);
      expect([...rows.tokens].sort((a, b) => a.series.localeCompare(b.series))).toEqual([
        { day: day('2026-03-02T00:00:00Z'), series: 'person', key: 'U1', tokens: 12 },
        { day: day('2026-03-02T00:00:00Z'), series: 'tool', key: null, tokens: 12 },
      ]);
    } finally {
      await t.close();
    }
  });
});
