import { z } from 'zod';
import { APPROVAL_STATUSES } from '../approvals/approval.js';
import type { AuditEventFilter } from '../approvals/audit-queries.js';
import { parseTimePoint } from '../audit/time-filter.js';

/** Events a history page shows unless `limit` says otherwise, and the most it shows. */
export const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 200;

/** The query parameters of the history's filters, as the form and the API name them. */
export const FILTER_FIELDS = ['since', 'until', 'tool', 'actor', 'outcome', 'channel', 'kind', 'q'] as const;
export type FilterField = (typeof FILTER_FIELDS)[number];

/** An empty form field means no filter. */
const field = (max: number) =>
  z.preprocess(
    (value) => (typeof value === 'string' && value.trim() === '' ? undefined : value),
    z.string().trim().max(max, `at most ${max} characters`).optional(),
  );

const querySchema = z.object({
  since: field(40),
  until: field(40),
  tool: field(100),
  actor: field(100),
  outcome: field(20).pipe(
    z
      .enum(APPROVAL_STATUSES, { message: `outcome must be one of ${APPROVAL_STATUSES.join(', ')}` })
      .optional(),
  ),
  channel: field(40),
  kind: field(60),
  q: field(200),
  cursor: field(16).pipe(z.string().regex(/^\d+$/, 'cursor must be a sequence number').optional()),
  limit: field(4).pipe(z.string().regex(/^\d+$/, 'limit must be a number').optional()),
});

/** What a history request asks: the filter, where the page starts, and the filters as given (for links). */
export interface AuditRequest {
  filter: AuditEventFilter;
  cursor: number | undefined;
  limit: number;
  /** The filters given, trimmed, to repeat in the page's links (Older, exports). */
  given: Partial<Record<FilterField, string>>;
}

/**
 * Reads the history's query parameters: times as ISO dates or date-times (or a span back from now, `7d`, as
 * `npm run audit` takes them), `actor` the actor or the requester, `outcome` the current status of the request
 * an event concerns, `q` a substring of the stored payload. A problem is a sentence for a 400 answer.
 */
export function parseAuditRequest(
  query: Record<string, string>,
  now: number,
): { ok: true; request: AuditRequest } | { ok: false; message: string } {
  const parsed = querySchema.safeParse(query);
  if (!parsed.success)
    return {
      ok: false,
      message: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '),
    };
  const o = parsed.data;
  const filter: AuditEventFilter = {};
  for (const key of ['since', 'until'] as const) {
    const text = o[key];
    if (text === undefined) continue;
    const at = parseTimePoint(text, now, key === 'until' ? 'end' : 'start');
    if (at === undefined)
      return {
        ok: false,
        message: `${key} must be an ISO date or date-time (2026-05-01T12:00:00Z) or a span such as 7d`,
      };
    filter[key] = at;
  }
  if (o.tool) filter.tool = o.tool;
  if (o.actor) filter.userId = o.actor;
  if (o.outcome) filter.status = o.outcome;
  if (o.channel) filter.channel = o.channel;
  if (o.kind) filter.kind = o.kind;
  if (o.q) filter.text = o.q;
  const limit = o.limit === undefined ? DEFAULT_PAGE_SIZE : Number(o.limit);
  if (limit < 1 || limit > MAX_PAGE_SIZE)
    return { ok: false, message: `limit must be between 1 and ${MAX_PAGE_SIZE}` };
  const given: AuditRequest['given'] = {};
  for (const key of FILTER_FIELDS) {
    const value = o[key];
    if (value !== undefined) given[key] = value;
  }
  return {
    ok: true,
    request: { filter, cursor: o.cursor === undefined ? undefined : Number(o.cursor), limit, given },
  };
}

/** A query string of the given filters and more parameters, for a link that keeps the view. */
export function queryString(
  given: AuditRequest['given'],
  more: Record<string, string | number> = {},
): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries({ ...more, ...given })) params.set(key, String(value));
  const text = params.toString();
  return text ? `?${text}` : '';
}
