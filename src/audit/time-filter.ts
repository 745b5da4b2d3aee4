const UNITS = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

/** Which end of a bare date (`2026-05-31`, a whole UTC day) a time point stands for. */
export type DateEdge = 'start' | 'end';

/**
 * A point in time written by a person: a span back from `now` (`30m`, `12h`, `7d`, `2w`) or an ISO date or
 * date-time (`2026-05-01`, `2026-05-01T12:00:00Z`). Undefined when it is neither. A bare date is the start
 * of that UTC day, or with `edge` `'end'` its last millisecond, so `--until 2026-05-31` includes May 31.
 *
 * @example
 * parseTimePoint('7d', now) // now - 7 days
 * parseTimePoint('2026-05-31', now, 'end') // 2026-05-31T23:59:59.999Z
 */
export function parseTimePoint(text: string, now: number, edge: DateEdge = 'start'): number | undefined {
  const span = /^(\d{1,6})([mhdw])$/.exec(text.trim());
  if (span) {
    const unit = UNITS[span[2] as keyof typeof UNITS];
    return now - Number(span[1]) * unit;
  }
  if (!/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(text.trim())) return undefined;
  const at = Date.parse(text.trim());
  if (Number.isNaN(at)) return undefined;
  const bareDate = /^\d{4}-\d{2}-\d{2}$/.test(text.trim());
  return bareDate && edge === 'end' ? at + UNITS.d - 1 : at;
}
