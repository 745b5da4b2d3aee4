import { sql } from 'drizzle-orm';
import type { Checkpoint } from '../audit/checkpoint.js';
import type { ChainPoint, CheckpointStore } from '../audit/checkpointer.js';
import { firstEventAtAfter } from './audit-push-store.js';
import { readNumber, readString } from './sql/columns.js';
import { count, type Row, row, rows } from './sql/program.js';
import type { SqlDatabase } from './sql/sql-database.js';

function toPoint(r: Row | undefined): ChainPoint | undefined {
  return r ? { seq: readNumber(r, 'seq'), hash: readString(r, 'hash'), at: readNumber(r, 'at') } : undefined;
}

function toCheckpoint(r: Row): Checkpoint {
  return {
    seq: readNumber(r, 'seq'),
    hash: readString(r, 'hash'),
    at: readNumber(r, 'at'),
    keyId: readString(r, 'key_id'),
    signature: readString(r, 'signature'),
  };
}

/** Signed checkpoints of the audit chain (table `audit_checkpoints`). */
export function createCheckpointStore(db: SqlDatabase): CheckpointStore {
  return {
    head: () =>
      db.read(function* () {
        return toPoint(yield* row(sql`select seq, hash, at from audit_events order by seq desc limit 1`));
      }),
    progress: () =>
      db.read(function* () {
        const found = yield* row(sql`select coalesce((select max(seq) from audit_events), 0) as head,
          coalesce((select max(seq) from audit_checkpoints), 0) as checkpointed`);
        return {
          head: found ? readNumber(found, 'head') : 0,
          checkpointed: found ? readNumber(found, 'checkpointed') : 0,
        };
      }),
    event: (seq) =>
      db.read(function* () {
        return toPoint(yield* row(sql`select seq, hash, at from audit_events where seq = ${seq}`));
      }),
    firstAfter: (seq) => db.read(() => firstEventAtAfter(seq)),
    latest: () =>
      db.read(function* () {
        const found = yield* row(sql`select * from audit_checkpoints order by seq desc limit 1`);
        return found ? toCheckpoint(found) : undefined;
      }),
    add: (c) =>
      db.write(function* () {
        return (
          (yield* count(sql`insert into audit_checkpoints (seq, hash, at, key_id, signature)
            values (${c.seq}, ${c.hash}, ${c.at}, ${c.keyId}, ${c.signature}) on conflict do nothing`)) === 1
        );
      }),
    unposted: (limit) =>
      db.read(function* () {
        return (yield* rows(sql`select * from audit_checkpoints where posted_ts is null
          order by seq limit ${limit}`)).map(toCheckpoint);
      }),
    posted: (seq, where, at) =>
      db.write(function* () {
        yield* count(sql`update audit_checkpoints set posted_channel = ${where.channel}, posted_ts = ${where.ts},
          posted_at = ${at} where seq = ${seq}`);
      }),
    all: () =>
      db.read(function* () {
        return (yield* rows(sql`select * from audit_checkpoints order by seq`)).map(toCheckpoint);
      }),
  };
}
