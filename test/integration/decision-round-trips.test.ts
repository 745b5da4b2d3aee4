import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openTestStores, type TestStores } from '../support/test-database.js';
import { createNoteRule, pausedRun, vote } from './store-scenario.js';

/** Every statement the PostgreSQL connections of this file send: node-postgres waits for each answer. */
const sent: string[] = [];
const query = pg.Client.prototype.query;

/**
 * What one decision costs on PostgreSQL, counted at the driver: each statement is a round trip, and the
 * audit chain's head (one lock for every process) is held from its lock to the commit.
 */
describe('round trips of one decision on PostgreSQL', () => {
  let s: TestStores;
  beforeAll(() => {
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      if (typeof args[0] === 'string') sent.push(args[0].replace(/\s+/g, ' '));
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query;
  });
  afterAll(() => {
    pg.Client.prototype.query = query;
  });
  beforeEach(async () => {
    s = await openTestStores('postgres');
  });
  afterEach(async () => s.close());

  it('a decision that settles its turn and claims the run is one transaction of 11 round trips', async () => {
    const { approvals } = await pausedRun(s, ['c1']);
    const [approval] = approvals;
    if (!approval) throw new Error('one approval expected');
    sent.length = 0;
    const result = await vote(s, approval, 'U2');
    expect(result).toMatchObject({ kind: 'decided', runClaimed: true });
    expect(sent.filter((t) => t === 'begin')).toHaveLength(1);
    expect(sent.filter((t) => t === 'commit')).toHaveLength(1);
    // begin; the run and the request locked in one statement; votes and the turn; the vote; the request; its
    // card's update owed; the run claimed; the head locked and read; both events (decision, run resumed) in one
    // insert; commit.
    expect(sent).toHaveLength(11);
    expect(sent.filter((t) => t.startsWith('insert into deliveries'))).toHaveLength(1);
    const head = sent.findIndex((t) => t.includes('pg_advisory_xact_lock'));
    expect(sent.slice(head).map((t) => t.split(' ').slice(0, 3).join(' '))).toEqual([
      'select pg_advisory_xact_lock($1)',
      'select seq, hash',
      'insert into audit_events',
      'commit',
    ]);
  });

  it('a vote that counts towards a quorum takes the head only for its one event', async () => {
    const { approvals } = await pausedRun(s, ['c1'], { ...createNoteRule(), quorum: 2 });
    const [approval] = approvals;
    if (!approval) throw new Error('one approval expected');
    sent.length = 0;
    expect(await vote(s, approval, 'U2')).toMatchObject({ kind: 'counted' });
    expect(sent.filter((t) => t.startsWith('insert into audit_events'))).toHaveLength(1);
    expect(sent.filter((t) => t.startsWith('select * from approvals where id = $1 and'))).toHaveLength(1);
  });
});
