import { createHash } from 'node:crypto';
import { leaseOf, type NewApproval, type RunLease } from '../../src/agent/ports.js';
import { initialRunState, type RunState } from '../../src/agent/run-state.js';
import type { ApprovalRecord, ApprovalRule } from '../../src/approvals/approval.js';
import { builtInPolicy } from '../../src/approvals/policy.js';
import { auditEvent } from '../../src/audit/audit-event.js';
import type { ThreadRef } from '../../src/conversations/surface-ports.js';
import type { Stores } from '../../src/db/stores.js';
import { randomId } from '../../src/ids.js';

/** Stores as one process sees them, with the owner its leases carry. */
export interface Actor {
  stores: Stores;
}

let threads = 0;

/** A thread no other test uses. */
export function newThread(teamId = 'T1'): ThreadRef {
  threads += 1;
  return { teamId, channelId: 'C1', threadTs: `${Date.now()}.${String(threads).padStart(6, '0')}` };
}

export const createNoteRule = (): ApprovalRule => builtInPolicy().forTool('create_note').rule;

export function newApproval(
  callId: string,
  rule: ApprovalRule = createNoteRule(),
  now = Date.now(),
): NewApproval {
  const args = JSON.stringify({ text: callId });
  return {
    id: randomId('apr'),
    callId,
    toolName: 'create_note',
    arguments: args,
    argumentsHash: createHash('sha256').update(args).digest('hex'),
    rule,
    expiresAt: rule.expiresAfterMs ? now + rule.expiresAfterMs : null,
    remindAt: rule.remindAfterMs ? now + rule.remindAfterMs : null,
  };
}

/** The claim under which this actor holds the run (an empty token, which never matches, when it holds none). */
export async function held(actor: Actor, runId: string): Promise<RunLease> {
  const run = await actor.stores.runs.getRun(runId);
  if (!run) throw new Error(`no run ${runId}`);
  return leaseOf(run);
}

/** Starts a run in a new conversation, as a Slack message would; the actor holds its lease. */
export async function startedRun(actor: Actor, thread: ThreadRef = newThread(), text = 'hello') {
  const conversationId = await actor.stores.conversations.findOrCreate(thread, 'slack');
  const runId = randomId('run');
  const started = await actor.stores.conversations.startRunOrQueue({
    conversationId,
    runId,
    message: { ...thread, userId: 'U1', text, messageTs: thread.threadTs },
    state: initialRunState(),
    audit: [
      auditEvent('run.started', {
        at: Date.now(),
        actor: 'U1',
        teamId: thread.teamId,
        conversationId,
        runId,
      }),
    ],
  });
  if (started !== 'started') throw new Error(`expected a started run, got ${started}`);
  return { conversationId, runId, thread };
}

/** The state of a run whose turn 1 asked for `callIds` and waits for them. */
export function pausedState(callIds: readonly string[]): RunState {
  return {
    ...initialRunState(),
    turn: 1,
    approvalRounds: 1,
    pausedTurn: {
      turn: 1,
      calls: callIds.map((callId) => ({
        callId,
        name: 'create_note',
        arguments: `{"text":"${callId}"}`,
        done: false,
      })),
    },
  };
}

/**
 * A run paused on a turn whose calls all wait for approval: stored (with their tool calls in the history) and
 * paused, as the runner leaves it. The actor's lease is given up by the pause.
 */
export async function pausedRun(
  actor: Actor,
  callIds: readonly string[] = ['c1'],
  rule?: ApprovalRule,
  now = Date.now(),
) {
  const run = await startedRun(actor);
  const state = pausedState(callIds);
  const approvals = await actor.stores.runs.saveTurn(await held(actor, run.runId), {
    state,
    status: 'running',
    items: callIds.map((callId) => ({
      kind: 'tool_call' as const,
      data: { callId, name: 'create_note', arguments: `{"text":"${callId}"}` },
    })),
    approvals: callIds.map((callId) => newApproval(callId, rule, now)),
    audit: [],
  });
  const paused = await actor.stores.runs.pauseIfPending(await held(actor, run.runId), 1, []);
  if (!paused) throw new Error('the run did not pause');
  return { ...run, state, approvals };
}

/** One person's vote, as the approval service records it. */
export function vote(
  actor: Actor,
  approval: ApprovalRecord,
  userId: string,
  choice: 'approve' | 'reject' = 'approve',
) {
  return actor.stores.approvals.vote({
    approvalId: approval.id,
    userId,
    vote: choice,
    reason: null,
    standing: false,
    editedArguments: null,
    audit: [
      auditEvent(choice === 'approve' ? 'approval.approved' : 'approval.rejected', {
        at: Date.now(),
        actor: userId,
        teamId: approval.teamId,
        approvalId: approval.id,
      }),
    ],
  });
}
