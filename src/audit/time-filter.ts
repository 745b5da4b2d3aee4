const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/**
 * A point in time written by a person: a span back from `now` (`30m`, `12h`, `7d`, `2w`) or an ISO date or
 * date-time (`2026-05-01`, `2026-05-01T12:00:00Z`). Undefined when it is neither.
 *
 * @example
 * parseTimePoint('7d', now) // now - 7 days
 */
export function parseTimePoint(text: string, now: number): number | undefined {
  const span = /^(\d{1,6})([mhdw])$/.exec(text.trim());
  if (span) {
    const unit = UNITS[span[2] ?? ''];
    return unit === undefined ? undefined : now - Number(span[1]) * unit;
  }
  if (!/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(text.trim())) return undefined;
  const at = Date.parse(text.trim());
  return Number.isNaN(at) ? undefined : at;
}
