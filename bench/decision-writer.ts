import { once } from 'node:events';
import type { MessagePort } from 'node:worker_threads';
import pg from 'pg';
import { ApprovalService } from '../src/approvals/approval-service.js';
import { Deciders } from '../src/approvals/deciders.js';
import { createApprovalStore } from '../src/db/approval-store.js';
import { openPostgresDatabase } from '../src/db/postgres/postgres-database.js';
import type { SqlDatabase } from '../src/db/sql/sql-database.js';
import { openSqliteDatabase } from '../src/db/sqlite/sqlite-database.js';
import { storeContext } from './store-fixture.js';

/** The database a writer opens: the SQLite file, or a PostgreSQL database through a pool of its own. */
export type WriterDatabase = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string };

/** Pool size of each PostgreSQL writer: the bot's default (`DATABASE_POOL_SIZE`); one decision at a time. */
export const WRITER_POOL_SIZE = 10;

export interface WriterData {
  database: WriterDatabase;
  approvals: { id: string; channelId: string }[];
  /** Where in the list this writer starts; every writer walks the whole list, so they race for each one. */
  offset: number;
}

export interface WriterReport {
  committed: number;
  lost: number;
  /** Statements sent to PostgreSQL (each a round trip: node-postgres waits for one before the next), commits among them. */
  statements: number;
  commits: number;
}

/**
 * Counts every statement this thread's PostgreSQL connections send (node-postgres sends one at a time and waits
 * for its answer, so each is a round trip), and the commits among them.
 */
const sent = { statements: 0, commits: 0 };
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  sent.statements += 1;
  const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: unknown } | undefined)?.text;
  if (text === 'commit') sent.commits += 1;
  return (query as (...a: unknown[]) => unknown).apply(this, args);
} as typeof query;

function open(database: WriterDatabase): Promise<SqlDatabase> | SqlDatabase {
  return database.kind === 'sqlite'
    ? openSqliteDatabase(database.path)
    : openPostgresDatabase(database.url, { poolSize: WRITER_POOL_SIZE });
}

/**
 * One writer on a worker thread, started once and used for every case: per case it gets a `WriterData`,
 * opens its own connection (pool), as its own process would (its own lease owner), answers 'ready', waits
 * for 'go', decides every approval of the list through the real service, closes, and answers its report.
 */
export async function workerMain(_data: unknown, port: MessagePort): Promise<void> {
  port.postMessage('loaded');
  for (;;) {
    const [data] = (await once(port, 'message')) as [WriterData];
    const ctx = storeContext(await open(data.database));
    const service = new ApprovalService({
      store: createApprovalStore(ctx),
      clock: ctx.clock,
      deciders: new Deciders({ clock: ctx.clock, adminUserIds: [] }),
    });
    port.postMessage('ready');
    await once(port, 'message');
    sent.statements = 0;
    sent.commits = 0;
    const report: WriterReport = { committed: 0, lost: 0, statements: 0, commits: 0 };
    const count = data.approvals.length;
    for (let k = 0; k < count; k++) {
      const approval = data.approvals[(data.offset + k) % count];
      if (!approval) continue;
      const result = await service.decide({
        approvalId: approval.id,
        userId: 'U2',
        teamId: 'T1',
        channelId: approval.channelId,
        vote: 'approve',
        reason: null,
      });
      if (result.ok && result.kind === 'decided') report.committed += 1;
      else report.lost += 1;
    }
    report.statements = sent.statements;
    report.commits = sent.commits;
    await ctx.db.close();
    port.postMessage(report);
  }
}
