import type { ConsoleSession } from '../console/ports.js';
import {
  type BatchOutcome,
  type BatchSkip,
  decideBatch,
  MAX_BATCH,
} from '../conversations/batch-decisions.js';
import { NOT_PERMITTED } from './console-actions.js';
import type { ConsoleDeps } from './console-deps.js';

/** A batch decision as the API and the decide page take it. */
export interface BatchInput {
  ids: string[];
  decision: 'approve' | 'reject';
  reason?: string | undefined;
}

/** What the API answers: each decided request, and each skipped one with a code and a sentence. */
export interface BatchAnswer {
  decided: { id: string; status: string }[];
  counted: { id: string }[];
  skipped: { id: string; code: string; message: string }[];
}

/** `{"ids":[...],"decision":"approve"|"reject","reason"?}`, or undefined when the body is not that. */
export function batchInput(body: unknown): BatchInput | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { ids, decision, reason } = body as Record<string, unknown>;
  if (decision !== 'approve' && decision !== 'reject') return undefined;
  if (reason !== undefined && typeof reason !== 'string') return undefined;
  if (!Array.isArray(ids) || ids.length === 0 || ids.length > MAX_BATCH) return undefined;
  if (!ids.every((id): id is string => typeof id === 'string' && id.length <= 100)) return undefined;
  return { ids, decision, reason };
}

/**
 * Decides the selection from the web: each request through `decideBatch` (the same check, compare-and-set,
 * audit event and follow-up as one decision), recorded with `surface: "web"`. A request this person may not
 * decide is skipped as an unknown one is (the same answer as a single decision).
 */
export async function decideBatchFromWeb(
  deps: ConsoleDeps,
  session: ConsoleSession,
  input: BatchInput,
): Promise<BatchAnswer> {
  const outcome: BatchOutcome = await decideBatch(deps, {
    approvalIds: input.ids,
    userId: session.userId,
    teamId: session.teamId,
    vote: input.decision,
    reason: input.decision === 'reject' ? input.reason?.trim() || null : null,
    surface: 'web',
  });
  return {
    decided: outcome.decided.map((a) => ({ id: a.id, status: a.status })),
    counted: outcome.counted.map((a) => ({ id: a.id })),
    skipped: outcome.skipped.map((skip) => ({ id: skip.approvalId, ...skipped(skip) })),
  };
}

/** Why a request was skipped, as a code (the single decision's codes) and a sentence. */
export function skipped(skip: BatchSkip): { code: string; message: string } {
  switch (skip.kind) {
    case 'not_found':
    case 'not_allowed':
      return { code: NOT_PERMITTED.code, message: NOT_PERMITTED.message };
    case 'already_decided':
      return { code: 'already_decided', message: `It was ${skip.approval.status} already.` };
    case 'already_voted':
      return { code: 'already_voted', message: 'You have already approved it.' };
    case 'failed':
      return {
        code: 'not_recorded',
        message: 'Your decision could not be recorded; nothing changed. Try again.',
      };
    case 'too_many':
      return { code: 'too_many', message: `At most ${MAX_BATCH} requests are decided at once.` };
  }
}

/**
 * Where the decide page's form goes after a batch: back to the list, the outcome in the query (counts and, per
 * skipped request, its id and code), so a reload decides nothing again.
 */
export function batchRedirect(answer: BatchAnswer, decision: 'approve' | 'reject'): string {
  const query = new URLSearchParams({
    batch: decision,
    done: String(answer.decided.length + answer.counted.length),
    skipped: answer.skipped.map((s) => `${s.id}~${s.code}`).join(','),
  });
  return `/console?${query}`;
}

const SKIP_SENTENCES: Record<string, string> = {
  [NOT_PERMITTED.code]: 'you may not decide it, or it does not exist',
  already_decided: 'it was decided already',
  already_voted: 'you have already approved it',
  not_recorded: 'your decision could not be recorded; try again',
  too_many: `at most ${MAX_BATCH} requests are decided at once`,
};

/** The decide page's notice from that query: what was decided, then each skipped request and why. */
export function batchNotice(query: (name: string) => string | undefined): string | undefined {
  const decision = query('batch');
  if (decision !== 'approve' && decision !== 'reject') return undefined;
  const done = Number.parseInt(query('done') ?? '0', 10) || 0;
  const skips = (query('skipped') ?? '')
    .split(',')
    .filter(Boolean)
    .map((pair) => pair.split('~'))
    .flatMap(([id, code]) =>
      id && /^apr_\w{1,60}$/.test(id) && code && SKIP_SENTENCES[code]
        ? [`${id} (${SKIP_SENTENCES[code]})`]
        : [],
    );
  const head = `${decision === 'approve' ? 'Approved' : 'Rejected'} ${done} selected ${done === 1 ? 'request' : 'requests'}.`;
  return skips.length > 0 ? `${head} Skipped ${skips.length}: ${skips.join('; ')}.` : head;
}
