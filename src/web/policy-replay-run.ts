import { DAY_MS, MAX_TREND_DAYS } from '../approvals/approval-trends.js';
import { pastRequests } from '../approvals/past-requests.js';
import {
  changedDecisions,
  type ReplayedRequest,
  type ReplaySummaryRow,
  replayRequest,
  summarizeReplay,
} from '../approvals/policy-replay.js';
import { policyFromText } from '../approvals/policy-source.js';
import type { ConsoleDeps } from './console-deps.js';

/** The name a pasted policy goes by in its problems, where `npm run policy` names the file. */
export const CANDIDATE_NAME = 'candidate policy';
export const DEFAULT_REPLAY_DAYS = 30;

/** What a replay of a candidate policy came to: the same figures as `npm run policy -- replay`. */
export interface ReplayAnswer {
  days: number;
  since: string;
  /** Requests replayed. */
  requests: number;
  summary: ReplaySummaryRow[];
  /** Every request the candidate would have decided differently (`differences` says how). */
  changed: ReplayedRequest[];
  /** Requests whose arguments retention removed: counted, not replayed. */
  pruned: { count: number; limits: string[] };
}

export type ReplayOutcome =
  | { ok: true; answer: ReplayAnswer }
  | { ok: false; code: 'bad_days'; problems: string[] }
  | { ok: false; code: 'invalid_policy'; problems: string[] };

/** `days` as given (a number, or the text of a form field); undefined when it is not a whole number in range. */
export function replayDays(given: unknown): number | undefined {
  if (given === undefined || given === '') return DEFAULT_REPLAY_DAYS;
  const days = typeof given === 'string' ? Number(given) : given;
  return typeof days === 'number' && Number.isInteger(days) && days >= 1 && days <= MAX_TREND_DAYS
    ? days
    : undefined;
}

/**
 * Replays a pasted policy over the workspace's requests of the last `days` days: checked as `npm run policy`
 * checks a file (the same problems), then the same replay over the same requests. Reads only; writes nothing.
 */
export async function replayCandidate(
  deps: Pick<ConsoleDeps, 'policy' | 'queries' | 'clock'>,
  teamId: string,
  text: string,
  days: number | undefined,
): Promise<ReplayOutcome> {
  if (days === undefined)
    return {
      ok: false,
      code: 'bad_days',
      problems: [`days must be a whole number from 1 to ${MAX_TREND_DAYS}.`],
    };
  const source = policyFromText(CANDIDATE_NAME, text, deps.policy.toolNames);
  if (!source.ok) return { ok: false, code: 'invalid_policy', problems: source.problems };
  const since = deps.clock.now() - days * DAY_MS;
  const past = await pastRequests(deps.queries, { since, teamId });
  const replayed = past.requests.map((r) => replayRequest(source.policy, r, deps.policy.adminUserIds));
  return {
    ok: true,
    answer: {
      days,
      since: new Date(since).toISOString(),
      requests: replayed.length,
      summary: summarizeReplay(replayed),
      changed: changedDecisions(replayed),
      pruned: { count: past.pruned.count, limits: [...past.pruned.limits] },
    },
  };
}
