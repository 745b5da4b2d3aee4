import { sql } from 'drizzle-orm';
import { type Delegation, type DelegationStore, delegationEvent } from '../approvals/delegation.js';
import { readNumber, readString } from './sql/columns.js';
import { audit, count, type Row, rows } from './sql/program.js';
import type { StoreContext } from './store-context.js';

function toDelegation(r: Row): Delegation {
  return {
    id: readString(r, 'id'),
    teamId: readString(r, 'team_id'),
    delegatorId: readString(r, 'delegator_id'),
    delegateId: readString(r, 'delegate_id'),
    until: readNumber(r, 'until'),
    createdAt: readNumber(r, 'created_at'),
  };
}

/** Delegations of deciding, with their audit events in the same transaction. */
export function createDelegationStore({ db }: StoreContext): DelegationStore {
  return {
    grant(delegation) {
      return db.write(function* () {
        yield* count(sql`insert into delegations (id, team_id, delegator_id, delegate_id, until, created_at)
          values (${delegation.id}, ${delegation.teamId}, ${delegation.delegatorId}, ${delegation.delegateId},
            ${delegation.until}, ${delegation.createdAt})`);
        yield* audit([
          delegationEvent('delegation.granted', delegation, delegation.delegatorId, delegation.createdAt),
        ]);
      });
    },
    activeFor: (teamId, delegateId, now) =>
      db.read(function* () {
        const found = yield* rows(sql`select * from delegations where team_id = ${teamId}
          and delegate_id = ${delegateId} and ended_at is null and until > ${now} order by created_at, id`);
        return found.map(toDelegation);
      }),
    involving: (teamId, userId, now) =>
      db.read(function* () {
        const found = yield* rows(sql`select * from delegations where team_id = ${teamId}
          and (delegate_id = ${userId} or delegator_id = ${userId}) and ended_at is null and until > ${now}
          order by created_at, id`);
        return found.map(toDelegation);
      }),
    end({ teamId, delegatorId, delegateId, endedBy, at }) {
      return db.write(function* () {
        const ended = yield* rows(sql`update delegations set ended_at = ${at}, ended_by = ${endedBy}
          where team_id = ${teamId} and delegator_id = ${delegatorId} and delegate_id = ${delegateId}
            and ended_at is null and until > ${at} returning *`);
        const delegations = ended.map(toDelegation);
        yield* audit(delegations.map((d) => delegationEvent('delegation.ended', d, endedBy, at)));
        return delegations;
      });
    },
  };
}
