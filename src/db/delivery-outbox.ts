import { type SQL, sql } from 'drizzle-orm';
import { DELIVERY_KINDS, readCardUpdate, storedCardUpdate } from '../conversations/delivery.js';
import type { Delivery, DeliveryOutbox } from '../conversations/store-ports.js';
import { toApprovalRecord } from './approval-rows.js';
import { inRemovedWorkspaces } from './removed-scope.js';
import { leaseColumns, takableLease } from './run-rows.js';
import { readEnum, readNumber, readOptionalString, readString } from './sql/columns.js';
import { audit, count, type Program, type Row, rows } from './sql/program.js';
import type { StoreContext } from './store-context.js';
import { threadOf } from './thread-rows.js';

/** Deliveries taken per retry round; the rest wait for the next round. */
const BATCH = 50;

/** Cards and replies owed to threads, each taken by one process at a time with a lease. */
export function createDeliveryOutbox(ctx: StoreContext): DeliveryOutbox {
  const { db, clock } = ctx;
  return {
    takeCards(approvalIds) {
      if (approvalIds.length === 0) return Promise.resolve([]);
      const at = clock.now();
      return db.write(function* () {
        const ids = approvalIds.map((id) => `card:${id}`);
        // The cards this process owed itself when it stored the turn, unless another took them meanwhile.
        const takable = yield* takableLease(ctx, 'deliveries', at, { mine: true });
        const taken = yield* take(ctx, at, sql`id in ${ids} and ${takable}`);
        const cards = yield* toDeliveries(taken);
        const order = new Map(approvalIds.map((id, index) => [id, index]));
        return cards
          .flatMap((d) => (d.kind === 'card' ? [d] : []))
          .sort((a, b) => (order.get(a.approval.id) ?? 0) - (order.get(b.approval.id) ?? 0));
      });
    },

    takeReply(runId) {
      const at = clock.now();
      return db.write(function* () {
        const takable = yield* takableLease(ctx, 'deliveries', at, { mine: true });
        return (yield* take(ctx, at, sql`id = ${`reply:${runId}`} and ${takable}`)).length === 1;
      });
    },

    takeDue(scope, now) {
      return db.write(function* () {
        // A card whose request was decided before it could be posted is owed no more.
        yield* count(sql`delete from deliveries where kind = 'card' and not exists
          (select 1 from approvals a where a.id = deliveries.approval_id and a.status = 'pending')`);
        const due = sql`id in (select d.id from deliveries d join conversations c on c.id = d.conversation_id
          where ${'surface' in scope ? sql`c.surface = ${scope.surface}` : sql`c.id = ${scope.conversationId}`}
            and d.due_at <= ${now} and ${yield* takableLease(ctx, 'deliveries', now, { as: 'd' })}
          order by d.due_at limit ${BATCH} ${ctx.db.dialect.forUpdateSkipLocked})`;
        return yield* toDeliveries(yield* take(ctx, now, due));
      });
    },

    cardPosted(approvalId, card, events) {
      const at = clock.now();
      return db.write(function* () {
        // The first card stored stays the card (a second one, posted by a process slow past its lease, is only a
        // copy whose buttons still decide the same request).
        yield* count(sql`update approvals set channel_id = ${card.channelId}, message_ts = ${card.messageTs},
          updated_at = ${at} where id = ${approvalId} and message_ts is null`);
        yield* count(sql`delete from deliveries where id = ${`card:${approvalId}`}`);
        yield* audit(events);
      });
    },

    replyPosted(runId) {
      return db.write(function* () {
        yield* count(sql`delete from deliveries where id = ${`reply:${runId}`}`);
      });
    },

    oweCardUpdate(approval, { dueAt, attempts, update }) {
      const at = clock.now();
      return db.write(function* () {
        // One row per card: whatever the number of changes that failed to show, the retry renders the latest.
        yield* count(sql`insert into deliveries (id, kind, conversation_id, approval_id, run_id, text, attempts,
            due_at, noticed, created_at)
          values (${`update:${approval.id}`}, 'card_update', ${approval.conversationId}, ${approval.id},
            ${approval.runId}, ${storedCardUpdate(update)}, ${attempts}, ${dueAt}, 0, ${at})
          on conflict (id) do update set due_at = excluded.due_at, text = excluded.text,
            attempts = case when deliveries.attempts > excluded.attempts then deliveries.attempts
              else excluded.attempts end,
            lease_owner = null, lease_until = null
          where deliveries.lease_owner is null or deliveries.lease_owner = ${ctx.owner}`);
      });
    },

    owedCardUpdate: (approvalId) =>
      db.read(function* () {
        const [owed] = yield* rows(sql`select due_at from deliveries
          where id = ${`update:${approvalId}`} and lease_owner = ${ctx.owner}`);
        return owed ? readNumber(owed, 'due_at') : undefined;
      }),

    cardsUpdated(shown) {
      if (shown.length === 0) return Promise.resolve();
      // Each only as it was when read before rendering: a change owed since moved its time.
      const each = shown.map(
        ({ approvalId, owedAt }) => sql`(id = ${`update:${approvalId}`} and due_at = ${owedAt})`,
      );
      return db.write(function* () {
        yield* count(
          sql`delete from deliveries where lease_owner = ${ctx.owner} and (${sql.join(each, sql` or `)})`,
        );
      });
    },

    dropped(delivery, events) {
      return db.write(function* () {
        const gone = yield* count(
          sql`delete from deliveries where id = ${deliveryId(delivery)} and lease_owner = ${ctx.owner}`,
        );
        if (gone > 0) yield* audit(events);
      });
    },

    dropWorkspace(scope, events) {
      return db.write(function* () {
        const of = inRemovedWorkspaces('c', scope);
        const owed =
          yield* rows(sql`select d.id, d.kind, d.conversation_id, d.run_id, d.approval_id, d.attempts,
            c.team_id, c.enterprise_id
          from deliveries d join conversations c on c.id = d.conversation_id where ${of} order by d.created_at, d.id`);
        if (owed.length === 0) return 0;
        yield* count(sql`delete from deliveries where id in ${owed.map((d) => readString(d, 'id'))}`);
        yield* audit(
          owed.flatMap((d) =>
            events({
              kind: readEnum(d, 'kind', DELIVERY_KINDS),
              teamId: readString(d, 'team_id'),
              enterpriseId: readOptionalString(d, 'enterprise_id'),
              conversationId: readString(d, 'conversation_id'),
              runId: readOptionalString(d, 'run_id'),
              approvalId: readOptionalString(d, 'approval_id'),
              attempts: readNumber(d, 'attempts'),
            }),
          ),
        );
        return owed.length;
      });
    },

    failed(delivery, { retryAt, text, noticed }) {
      return db.write(function* () {
        yield* count(sql`update deliveries set attempts = attempts + 1, due_at = ${retryAt},
          lease_owner = null, lease_until = null, text = coalesce(${text ?? null}, text),
          noticed = ${noticed ? sql`1` : sql`noticed`}
          where id = ${deliveryId(delivery)} and lease_owner = ${ctx.owner}`);
      });
    },
  };
}

function deliveryId(delivery: Delivery): string {
  switch (delivery.kind) {
    case 'card':
      return `card:${delivery.approval.id}`;
    case 'card_update':
      return `update:${delivery.approval.id}`;
    case 'reply':
      return `reply:${delivery.runId}`;
  }
}

/** Leases the deliveries `which` selects to this process. */
function* take(ctx: StoreContext, at: number, which: SQL): Program<Row[]> {
  return yield* rows(sql`update deliveries set ${leaseColumns(ctx, at)} where ${which} returning *`);
}

/** What each taken delivery needs: a card its request (still pending), a reply its thread. */
function* toDeliveries(taken: readonly Row[]): Program<Delivery[]> {
  const deliveries: Delivery[] = [];
  for (const d of [...taken].sort((a, b) => readNumber(a, 'due_at') - readNumber(b, 'due_at'))) {
    const attempts = readNumber(d, 'attempts');
    const kind = readEnum(d, 'kind', DELIVERY_KINDS);
    if (kind === 'card_update') {
      // Rendered from the request's state when it is sent, whatever that state is by then.
      const [approval] = yield* rows(
        sql`select * from approvals where id = ${readOptionalString(d, 'approval_id')}`,
      );
      const update = readCardUpdate(readOptionalString(d, 'text'));
      if (approval)
        deliveries.push({
          kind,
          approval: toApprovalRecord(approval),
          update,
          attempts,
          owedAt: readNumber(d, 'due_at'),
        });
      continue;
    }
    if (kind === 'card') {
      const [approval] = yield* rows(sql`select * from approvals
        where id = ${readOptionalString(d, 'approval_id')} and status = 'pending'`);
      if (approval) {
        deliveries.push({
          kind: 'card',
          approval: toApprovalRecord(approval),
          attempts,
          noticed: readNumber(d, 'noticed') === 1,
        });
      }
      continue;
    }
    const [thread] = yield* rows(sql`select team_id, enterprise_id, channel_id, thread_ts from conversations
      where id = ${readString(d, 'conversation_id')}`);
    const runId = readOptionalString(d, 'run_id');
    if (!thread || !runId) continue;
    deliveries.push({
      kind: 'reply',
      runId,
      attempts,
      text: readOptionalString(d, 'text') ?? '',
      thread: threadOf(thread),
      owedSince: readNumber(d, 'created_at'),
      shown: readNumber(d, 'noticed') === 1,
    });
  }
  return deliveries;
}
