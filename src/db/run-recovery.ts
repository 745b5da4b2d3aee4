import { sql } from 'drizzle-orm';
import type { ClaimedRun, RunRecovery } from '../conversations/store-ports.js';
import { toApprovalRecord } from './approval-rows.js';
import { claimColumns, takableLease } from './run-rows.js';
import { readString } from './sql/columns.js';
import { count, rows } from './sql/program.js';
import type { StoreContext } from './store-context.js';
import { threadOf } from './thread-rows.js';

/** Runs and queues a stopped process left behind, taken over through leases. */
export function createRunRecovery(ctx: StoreContext): RunRecovery {
  const { db, clock } = ctx;
  return {
    claimAbandonedRuns(scope, driven = []) {
      const at = clock.now();
      return db.write(function* () {
        // A compare-and-set per run: of several processes recovering at once, each run goes to one.
        const where =
          'surface' in scope
            ? sql`status = 'running' and ${yield* takableLease(ctx, 'runs', at)}
                and conversation_id in (select id from conversations where surface = ${scope.surface})`
            : sql`status = 'running' and conversation_id = ${scope.conversationId}`;
        const taken = driven.length > 0 ? sql`${where} and id not in ${driven}` : where;
        const claimed = yield* rows(sql`update runs set ${claimColumns(ctx, at)} where ${taken}
          returning id, conversation_id`);
        const runs: ClaimedRun[] = [];
        for (const run of claimed) {
          const conversationId = readString(run, 'conversation_id');
          const [thread] =
            yield* rows(sql`select team_id, enterprise_id, channel_id, thread_ts from conversations
            where id = ${conversationId}`);
          if (!thread) continue;
          runs.push({
            runId: readString(run, 'id'),
            conversationId,
            thread: threadOf(thread),
          });
        }
        return runs;
      });
    },

    unreportedExecutions: (runId) =>
      db.read(function* () {
        const found = yield* rows(sql`select * from approvals
          where run_id = ${runId} and status = 'executing' and result is null order by created_at, call_id`);
        return found.map(toApprovalRecord);
      }),

    setUnknownOutcome(approvalId, result) {
      const at = clock.now();
      return db.write(function* () {
        yield* count(sql`update approvals set result = ${result}, updated_at = ${at}
          where id = ${approvalId} and status = 'executing' and result is null`);
      });
    },

    stalledQueues: (surface) =>
      db.read(function* () {
        const found = yield* rows(sql`select distinct q.conversation_id from queued_messages q
          join conversations c on c.id = q.conversation_id
          where c.surface = ${surface} and not exists (select 1 from runs r
            where r.conversation_id = q.conversation_id and r.status in ('running', 'paused'))`);
        return found.map((r) => readString(r, 'conversation_id'));
      }),
  };
}
