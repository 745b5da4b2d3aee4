import { type SQL, sql } from 'drizzle-orm';
import { type HistoryItem, historyItemSchema, type StoredItem } from '../agent/history.js';
import { RUN_STATUSES, RunHandedOver, type RunLease, type RunRecord } from '../agent/ports.js';
import { CURRENT_RUN_STATE_VERSION, type RunState, serializeRunState } from '../agent/run-state.js';
import { storedCardUpdate } from '../conversations/delivery.js';
import type { CardUpdate } from '../conversations/surface-ports.js';
import { AppError } from '../errors.js';
import { readEnum, readNumber, readOptionalNumber, readOptionalString, readString } from './sql/columns.js';
import { count, type Program, type Row, row, rows } from './sql/program.js';
import type { StoreContext } from './store-context.js';
import { enterpriseOf } from './thread-rows.js';

/** A run joined with its conversation, as this process's runner reads it (with its claim, if it holds one). */
export function* runById(ctx: StoreContext, runId: string): Program<RunRecord | undefined> {
  const found = yield* row(sql`select r.id, r.conversation_id, r.status, r.state, r.requester_id,
      case when r.lease_owner = ${ctx.owner} then r.lease_token end as lease_token,
      c.team_id, c.enterprise_id, c.channel_id, c.thread_ts
    from runs r join conversations c on c.id = r.conversation_id where r.id = ${runId}`);
  if (!found) return undefined;
  return {
    id: readString(found, 'id'),
    conversationId: readString(found, 'conversation_id'),
    status: readEnum(found, 'status', RUN_STATUSES),
    state: readString(found, 'state'),
    requesterId: readString(found, 'requester_id'),
    teamId: readString(found, 'team_id'),
    ...enterpriseOf(found),
    channelId: readString(found, 'channel_id'),
    threadTs: readString(found, 'thread_ts'),
    leaseToken: readOptionalString(found, 'lease_token'),
  };
}

/**
 * Locks the run row, the first lock of every transaction that changes a run, and checks that the claim the
 * writer carries still holds the lease: a driver that stalled past its lease finds the run taken over (even if
 * its process claimed the run again since) and changes nothing.
 */
export function* lockLeasedRun(ctx: StoreContext, lease: RunLease): Program<Row> {
  const found = yield* row(sql`select * from runs where id = ${lease.runId} ${ctx.db.dialect.forUpdate}`);
  if (!found) throw new AppError('run.not_found', `Run ${lease.runId} not found`);
  const held =
    readOptionalString(found, 'lease_owner') === ctx.owner &&
    readOptionalString(found, 'lease_token') === lease.token;
  if (!held) throw new RunHandedOver(lease.runId);
  return found;
}

/**
 * A condition on the lease columns of `table` (alias `as`): the lease may be taken now because it expired, was
 * never taken, or belongs to a process known to be gone (read first, then judged). A lease this process holds
 * is not takable: what it leased it is working on (only `mine` lets it take back its own).
 */
export function* takableLease(
  ctx: StoreContext,
  table: 'runs' | 'deliveries' | 'audit_cursors' | 'accepted_requests' | 'slack_installations',
  at: number,
  { as = table, mine = false }: { as?: string; mine?: boolean } = {},
): Program<SQL> {
  // Only leases held now (the runs_leased index), so the scan stays small however many runs ended.
  const holders = yield* rows(sql`select distinct lease_owner from ${sql.raw(table)}
    where lease_owner is not null and lease_until >= ${at}`);
  const gone = holders.map((h) => readString(h, 'lease_owner')).filter((owner) => ctx.ownerIsGone(owner));
  const column = (name: string) => sql.raw(`${as}.${name}`);
  const own = mine ? sql` or ${column('lease_owner')} = ${ctx.owner}` : sql``;
  const dead = gone.length > 0 ? sql` or ${column('lease_owner')} in ${gone}` : sql``;
  return sql`(${column('lease_until')} is null or ${column('lease_until')} < ${at}${own}${dead})`;
}

/** The lease columns of a run this process claims: a new token for the new claim. */
export function claimColumns(ctx: StoreContext, at: number) {
  return sql`lease_owner = ${ctx.owner}, lease_token = ${ctx.newId('lease')}, lease_until = ${at + ctx.leaseMs}`;
}

/** The lease columns of something this process holds and keeps holding (a run it writes, a delivery it takes). */
export function leaseColumns(ctx: StoreContext, at: number) {
  return sql`lease_owner = ${ctx.owner}, lease_until = ${at + ctx.leaseMs}`;
}

/** A run that nobody drives (paused, or ended). */
export const RELEASED = sql`lease_owner = null, lease_token = null, lease_until = null`;

/** The state columns of a run row for a given state. */
export function stateColumns(state: RunState, at: number) {
  return sql`state = ${serializeRunState(state)}, schema_version = ${CURRENT_RUN_STATE_VERSION},
    turn = ${state.turn}, updated_at = ${at}`;
}

/** Inserts a running run, leased to this process. */
export function* insertRun(
  ctx: StoreContext,
  input: { conversationId: string; runId: string; requesterId: string; state: RunState; at: number },
): Program<void> {
  const { conversationId, runId, requesterId, state, at } = input;
  yield* count(sql`insert into runs (id, conversation_id, status, state, schema_version, turn, requester_id,
      lease_owner, lease_token, lease_until, created_at, updated_at)
    values (${runId}, ${conversationId}, 'running', ${serializeRunState(state)}, ${CURRENT_RUN_STATE_VERSION},
      ${state.turn}, ${requesterId}, ${ctx.owner}, ${ctx.newId('lease')}, ${at + ctx.leaseMs}, ${at}, ${at})`);
}

/** Appends history items, in order. */
export function* insertItems(
  conversationId: string,
  runId: string | null,
  turn: number | null,
  items: readonly HistoryItem[],
  at: number,
): Program<void> {
  if (items.length === 0) return;
  const values = items.map(
    (item) => sql`(${conversationId}, ${runId}, ${turn}, ${item.kind}, ${JSON.stringify(item.data)}, ${at})`,
  );
  yield* count(sql`insert into conversation_items (conversation_id, run_id, turn, kind, data, created_at)
    values ${sql.join(values, sql`, `)}`);
}

/** The conversation's history in order, each item checked against the history schema. */
export function* historyOf(conversationId: string): Program<StoredItem[]> {
  const found = yield* rows(sql`select id, run_id, turn, kind, data from conversation_items
    where conversation_id = ${conversationId} order by id`);
  return found.map(
    (item): StoredItem => ({
      ...historyItemSchema.parse({
        kind: readString(item, 'kind'),
        data: JSON.parse(readString(item, 'data')),
      }),
      seq: readNumber(item, 'id'),
      runId: readOptionalString(item, 'run_id'),
      turn: readOptionalNumber(item, 'turn'),
    }),
  );
}

/** True when the conversation has a running or paused run (at most one, by a unique index). */
export function* activeRunStatus(conversationId: string): Program<'running' | 'paused' | undefined> {
  const active = yield* row(sql`select status from runs
    where conversation_id = ${conversationId} and status in ('running', 'paused')`);
  if (!active) return undefined;
  return readEnum(active, 'status', ['running', 'paused'] as const);
}

/** A card is owed for a new pending request; the process that paused the run posts it (it holds the lease). */
export function* oweCard(
  ctx: StoreContext,
  approval: { id: string; runId: string; conversationId: string },
  at: number,
): Program<void> {
  yield* count(sql`insert into deliveries (id, kind, conversation_id, approval_id, run_id, attempts, due_at,
      lease_owner, lease_until, noticed, created_at)
    values (${`card:${approval.id}`}, 'card', ${approval.conversationId}, ${approval.id}, ${approval.runId}, 0,
      ${at}, ${ctx.owner}, ${at + ctx.leaseMs}, 0, ${at})
    on conflict (id) do nothing`);
}

/**
 * A change to a request owes its card's update from the transaction that makes it, leased to this process,
 * which shows it at once and then says it landed (`cardsUpdated`). Should the process die first, the lease runs
 * out and another renders the card from the state then: no card keeps offering buttons for a decided request.
 * One row per card: an update already owed (Slack refused one) is taken over, its failed tries kept.
 */
export function* oweCardRefresh(
  ctx: StoreContext,
  approval: { id: string; runId: string; conversationId: string },
  at: number,
  update: CardUpdate = {},
): Program<void> {
  yield* count(sql`insert into deliveries (id, kind, conversation_id, approval_id, run_id, text, attempts, due_at,
      lease_owner, lease_until, noticed, created_at)
    values (${`update:${approval.id}`}, 'card_update', ${approval.conversationId}, ${approval.id}, ${approval.runId},
      ${storedCardUpdate(update)}, 0, ${at}, ${ctx.owner}, ${at + ctx.leaseMs}, 0, ${at})
    on conflict (id) do update set text = excluded.text, due_at = excluded.due_at,
      lease_owner = excluded.lease_owner, lease_until = excluded.lease_until`);
}

/** A run's last message is owed to its thread; the process that ended the run posts it (it holds the lease). */
export function* oweReply(
  ctx: StoreContext,
  run: { id: string; conversationId: string },
  text: string,
  at: number,
): Program<void> {
  yield* count(sql`insert into deliveries (id, kind, conversation_id, run_id, text, attempts, due_at,
      lease_owner, lease_until, noticed, created_at)
    values (${`reply:${run.id}`}, 'reply', ${run.conversationId}, ${run.id}, ${text}, 0, ${at}, ${ctx.owner},
      ${at + ctx.leaseMs}, 0, ${at})
    on conflict (id) do update set text = excluded.text, lease_owner = excluded.lease_owner,
      lease_until = excluded.lease_until`);
}

/** Reads the conversation id of a locked run row. */
export function conversationOf(run: Row): string {
  return readString(run, 'conversation_id');
}
