import { statSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import type { HistoryItem } from '../src/agent/history.js';
import type { ChatModel } from '../src/agent/model.js';
import type { RunStore } from '../src/agent/ports.js';
import { initialRunState } from '../src/agent/run-state.js';
import { Runner } from '../src/agent/runner.js';
import { ToolRegistry } from '../src/agent/tool-registry.js';
import type { ApprovalRecord } from '../src/approvals/approval.js';
import { ApprovalService } from '../src/approvals/approval-service.js';
import { Deciders } from '../src/approvals/deciders.js';
import { builtInPolicy } from '../src/approvals/policy.js';
import type { ThreadRef } from '../src/conversations/surface-ports.js';
import { openPostgresDatabase } from '../src/db/postgres/postgres-database.js';
import { insertItems } from '../src/db/run-rows.js';
import { count } from '../src/db/sql/program.js';
import type { SqlDatabase } from '../src/db/sql/sql-database.js';
import { openSqliteDatabase } from '../src/db/sqlite/sqlite-database.js';
import type { StoreContext } from '../src/db/store-context.js';
import { createStores } from '../src/db/stores.js';
import { randomId } from '../src/ids.js';
import { silentLogger } from '../src/logger.js';
import { createBuiltInTools } from '../src/tools/built-in-tools.js';

const usage = { promptTokens: 10, completionTokens: 5, totalTokens: 15 };

/** A model that asks for `create_note` (approval needed) and answers once a tool output is in. */
const scriptedModel: ChatModel = {
  async complete({ messages }) {
    if (messages.at(-1)?.role === 'tool') return { text: 'Done.', toolCalls: [], usage };
    return {
      text: null,
      toolCalls: [{ callId: randomId('call'), name: 'create_note', arguments: '{"text":"benchmark note"}' }],
      usage,
    };
  },
};

/** The i-th item of a synthetic conversation: user, tool call, tool output, assistant, and again. */
export function priorItem(i: number): HistoryItem {
  const callId = `call_prior_${i - (i % 4)}`;
  switch (i % 4) {
    case 0:
      return {
        kind: 'user_message',
        data: { text: `Question ${i}: what time is it in Berlin, and any notes?`, userId: 'U1' },
      };
    case 1:
      return {
        kind: 'tool_call',
        data: { callId, name: 'get_current_time', arguments: '{"timeZone":"Europe/Berlin"}' },
      };
    case 2:
      return {
        kind: 'tool_output',
        data: { callId, name: 'get_current_time', output: '2026-11-30T13:00:00+01:00', status: 'ok' },
      };
    default:
      return {
        kind: 'assistant_message',
        data: { text: `Answer ${i}: it is 13:00 in Berlin, and there are no notes yet. `.repeat(2) },
      };
  }
}

/** What one pause and its resume cost, measured around the real store calls. */
export interface PauseSample {
  /** saveTurn of the paused turn (one transaction: items, approvals, state, audit). */
  persistMs: number;
  /** WAL bytes the pause appended (every page the transaction wrote). */
  walBytes: number;
  /** Serialised run state as stored. */
  stateBytes: number;
}

/**
 * A PRAGMA on the database's own connection (journal settings are per connection). Run outside a transaction,
 * as SQLite refuses some (e.g. `synchronous`) inside one; its rows, if any, are not read.
 */
export function pragma(db: SqlDatabase, text: string): Promise<number> {
  return db.read(function* () {
    return yield* count(sql.raw(`PRAGMA ${text}`));
  });
}

/** The context of one process's stores on `db`: its own lease owner, nobody else known to be gone. */
export function storeContext(db: SqlDatabase, owner: string = randomId('bench')): StoreContext {
  return {
    db,
    clock: { now: () => Date.now() },
    newId: randomId,
    owner,
    leaseMs: 30_000,
    ownerIsGone: () => false,
  };
}

/**
 * The real SQLite stores, runner and approval service on a file, with a scripted in-memory model, plus
 * timing wrappers around the store calls that bracket a pause and a resume.
 */
export async function createStoreFixture(path: string) {
  const db = openSqliteDatabase(path);
  await pragma(db, 'wal_autocheckpoint = 0');
  const walSize = () => {
    try {
      return statSync(`${path}-wal`).size;
    } catch {
      return 0;
    }
  };
  return storeFixture(db, walSize, () => pragma(db, 'wal_checkpoint(TRUNCATE)'));
}

/**
 * The same on a PostgreSQL database (migrated on open). It has no WAL file of its own to measure (`walBytes`
 * is 0) and nothing to checkpoint.
 */
export async function createPostgresStoreFixture(url: string) {
  const db = await openPostgresDatabase(url, { poolSize: 2 });
  return storeFixture(
    db,
    () => 0,
    async () => 0,
  );
}

function storeFixture(db: SqlDatabase, walSize: () => number, checkpoint: () => Promise<number>) {
  const ctx = storeContext(db);
  const { clock } = ctx;
  const stores = createStores(ctx);
  const inner = stores.runs;
  let lastPause: PauseSample | undefined;
  let historyLoadedAt = Number.NaN;
  const store: RunStore = {
    ...inner,
    loadHistory(conversationId) {
      historyLoadedAt = performance.now();
      return inner.loadHistory(conversationId);
    },
    async saveTurn(lease, input) {
      // The turn that creates requests waiting for a person: the pause's one transaction.
      if (!input.approvals.some((approval) => !approval.automatic)) return inner.saveTurn(lease, input);
      const wal = walSize();
      const started = performance.now();
      const created = await inner.saveTurn(lease, input);
      const persistMs = performance.now() - started;
      const stateBytes = Buffer.byteLength((await inner.getRun(lease.runId))?.state ?? '');
      lastPause = { persistMs, walBytes: walSize() - wal, stateBytes };
      return created;
    },
  };
  const conversations = stores.conversations;
  const approvals = new ApprovalService({
    store: stores.approvals,
    clock,
    deciders: new Deciders({ clock, adminUserIds: [] }),
  });
  const poster = { post: async () => ({ kind: 'posted' as const }), postText: async () => {} };
  const tools = new ToolRegistry(createBuiltInTools({ clock, notes: stores.notes, poster }));
  const runner = new Runner({
    model: scriptedModel,
    tools,
    policy: builtInPolicy(),
    store,
    standing: stores.standing,
    clock,
    newId: randomId,
    logger: silentLogger,
    // The default of TOOL_OUTPUT_MAX_CHARS.
    toolOutputMaxChars: 16_000,
  });
  let threads = 0;

  return {
    db,
    store: inner,
    approvals,
    /** A new thread whose conversation already holds `priorItems` items. */
    async seedThread(priorItems: number): Promise<{ thread: ThreadRef; conversationId: string }> {
      threads += 1;
      const thread = {
        teamId: 'T1',
        channelId: 'C1',
        threadTs: `1700000000.${String(threads).padStart(6, '0')}`,
      };
      const conversationId = await conversations.findOrCreate(thread, 'slack');
      const items = Array.from({ length: priorItems }, (_, i) => priorItem(i));
      const at = clock.now();
      await db.write(function* () {
        yield* insertItems(conversationId, null, null, items, at);
      });
      return { thread, conversationId };
    },
    /** Starts a run with a user message and drives it until it pauses on its approval. */
    async pause(
      thread: ThreadRef,
      conversationId: string,
    ): Promise<{ approval: ApprovalRecord; sample: PauseSample }> {
      const runId = randomId('run');
      const message = {
        ...thread,
        userId: 'U1',
        text: 'please add a note',
        messageTs: (Date.now() / 1000).toFixed(6),
      };
      const started = await conversations.startRunOrQueue({
        conversationId,
        runId,
        message,
        state: initialRunState(),
        audit: [],
      });
      if (started !== 'started') throw new Error(`the run did not start (${started})`);
      lastPause = undefined;
      const outcome = await runner.advance(runId);
      const approval = outcome.kind === 'paused' ? outcome.approvals[0] : undefined;
      if (!approval || !lastPause) throw new Error(`the run did not pause (${outcome.kind})`);
      return { approval, sample: lastPause };
    },
    /** Approves and resumes; the resume time runs from loading the run to asking the model again. */
    async approveAndResume(approval: ApprovalRecord): Promise<{ resumeMs: number }> {
      const decided = await approvals.decide({
        approvalId: approval.id,
        userId: 'U2',
        teamId: approval.teamId,
        channelId: approval.channelId,
        vote: 'approve',
        reason: null,
      });
      if (!decided.ok || decided.kind !== 'decided' || !decided.runClaimed)
        throw new Error('approval did not claim the run');
      historyLoadedAt = Number.NaN;
      const started = performance.now();
      const outcome = await runner.advance(approval.runId);
      if (outcome.kind !== 'completed') throw new Error(`the resumed run ended ${outcome.kind}`);
      return { resumeMs: historyLoadedAt - started };
    },
    checkpoint,
    close: () => db.close(),
  };
}
