import { once } from 'node:events';
import type { MessagePort } from 'node:worker_threads';
import { ApprovalService } from '../src/approvals/approval-service.js';
import { createApprovalStore } from '../src/db/approval-store.js';
import { openSqliteDatabase } from '../src/db/sqlite/sqlite-database.js';
import { storeContext } from './store-fixture.js';

export interface WriterData {
  path: string;
  approvals: { id: string; channelId: string }[];
  /** Where in the list this writer starts; every writer walks the whole list, so they race for each one. */
  offset: number;
}

export interface WriterReport {
  committed: number;
  lost: number;
}

/**
 * One writer on its own connection, as its own process would be (its own lease owner): decides every approval
 * of the list through the real service.
 */
export async function workerMain(data: WriterData, port: MessagePort): Promise<void> {
  const ctx = storeContext(openSqliteDatabase(data.path));
  const service = new ApprovalService({
    store: createApprovalStore(ctx),
    clock: ctx.clock,
    adminUserIds: [],
  });
  port.postMessage('ready');
  await once(port, 'message');
  const report: WriterReport = { committed: 0, lost: 0 };
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
  await ctx.db.close();
  port.postMessage(report);
}
