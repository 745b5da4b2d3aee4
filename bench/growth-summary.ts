import type { ClickFigures } from './growth-clicks.js';
import { type Row, type TargetCheck, target } from './report.js';

const MB = 1024 * 1024;
const ratio = (a: number, b: number) => a / Math.max(b, 1e-9);

export type Engine = 'SQLite' | 'PostgreSQL';

export interface Case {
  events: number;
  pending: number;
  /** The log the others are compared with: no history, only the pending requests' own events. */
  empty: boolean;
}

/** What one database gave. */
export interface Measured {
  rows: Row[];
  bytes: number;
  decided: number;
  reads: Map<string, number>;
  verifyMiB: number;
  exportMiB: number;
  decisionsPerSecond: number;
  clicks?: ClickFigures;
  plans?: string[];
}

/** The ratios between sizes, the targets and the size per 1,000 rows of one engine. */
export function summarise(
  engine: Engine,
  cases: readonly Case[],
  measured: readonly Measured[],
  rows: Row[],
  targets: TargetCheck[],
  notes: string[],
): void {
  const byEvents = cases.flatMap((c, i) => (!c.empty && c.pending === cases[1]?.pending ? [i] : []));
  const small = measured[byEvents[0] ?? 0];
  const large = measured[byEvents.at(-1) ?? 0];
  const empty = measured[0];
  const smallCase = cases[byEvents[0] ?? 0];
  const largeCase = cases[byEvents.at(-1) ?? 0];
  if (!small || !large || !empty || !smallCase || !largeCase) return;
  const sizes = `${largeCase.events.toLocaleString('en')} / ${smallCase.events.toLocaleString('en')} events`;
  rows.push({
    case: `${engine}: database size per 1,000 audit events / per 1,000 approved conversations`,
    metrics: {
      'MB per 1,000 events':
        ratio(large.bytes - small.bytes, largeCase.events - smallCase.events) * (1000 / MB),
      'MB per 1,000 conversations':
        ratio(large.bytes - small.bytes, large.decided - small.decided) * (1000 / MB),
    },
  });
  rows.push({
    case: `${engine}: ${sizes}, peak memory of verify / export`,
    metrics: {
      'verify ×': ratio(large.verifyMiB, small.verifyMiB),
      'export ×': ratio(large.exportMiB, small.exportMiB),
    },
  });
  targets.push(
    target(
      `${engine}: audit verify peak memory, ${sizes}`,
      ratio(large.verifyMiB, small.verifyMiB),
      1.5,
      '×',
    ),
  );
  targets.push(
    target(
      `${engine}: audit export peak memory, ${sizes}`,
      ratio(large.exportMiB, small.exportMiB),
      1.5,
      '×',
    ),
  );
  let grew = false;
  for (const [name, p99] of large.reads) {
    const r = ratio(p99, small.reads.get(name) ?? 0);
    targets.push(target(`${engine}: ${name} p99, ${sizes}`, r, 1.5, '×'));
    grew ||= r > 1.5;
  }
  if (grew && large.plans)
    notes.push(`${engine} plans at ${largeCase.events} events: ${large.plans.join('; ')}`);
  targets.push(
    target(
      `${engine}: decisions/s, empty log / ${largeCase.events.toLocaleString('en')} events`,
      ratio(empty.decisionsPerSecond, large.decisionsPerSecond),
      1.2,
      '×',
    ),
  );
  if (empty.clicks && large.clicks)
    targets.push(
      target(
        `${engine}: click → ack p99, ${largeCase.events.toLocaleString('en')} events / empty log`,
        ratio(large.clicks.quietP99, empty.clicks.quietP99),
        1.2,
        '×',
      ),
    );
  if (large.clicks?.duringP99 !== undefined)
    targets.push(
      target(
        `${engine}: click → ack p99 while prune runs / quiet, ${largeCase.events.toLocaleString('en')} events`,
        ratio(large.clicks.duringP99, large.clicks.quietP99),
        1.5,
        '×',
      ),
    );
}
