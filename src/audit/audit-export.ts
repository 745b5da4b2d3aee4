import type { StoredAuditEvent } from './audit-event.js';

/** An audit event with what admins filter by: the tool and the current status of the request it concerns. */
export interface ExportRow extends StoredAuditEvent {
  tool: string | null;
  approvalStatus: string | null;
}

export const EXPORT_FORMATS = ['table', 'csv', 'jsonl'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

const COLUMNS = [
  'seq',
  'time',
  'actor',
  'kind',
  'team',
  'enterprise',
  'conversation',
  'run',
  'approval',
  'tool',
  'status',
  'payload',
  'prev_hash',
  'hash',
] as const;

function cells(row: ExportRow): Record<(typeof COLUMNS)[number], string> {
  return {
    seq: String(row.seq),
    time: new Date(row.at).toISOString(),
    actor: row.actor,
    kind: row.kind,
    team: row.teamId ?? '',
    enterprise: row.enterpriseId ?? '',
    conversation: row.conversationId ?? '',
    run: row.runId ?? '',
    approval: row.approvalId ?? '',
    tool: row.tool ?? '',
    status: row.approvalStatus ?? '',
    payload: JSON.stringify(row.payload),
    prev_hash: row.prevHash,
    hash: row.hash,
  };
}

/**
 * A CSV cell that a spreadsheet shows as text: a leading `=`, `+`, `-`, `@` (or tab or carriage return, which
 * some spreadsheets skip before looking) gets a `'` in front, so no formula runs; then RFC 4180 quoting.
 */
export function csvCell(value: string): string {
  const neutral = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(neutral) ? `"${neutral.replace(/"/g, '""')}"` : neutral;
}

/** Audit events as lines of the chosen format (table and CSV with a header line). */
export function formatEvents(rows: readonly ExportRow[], format: ExportFormat): string[] {
  if (format === 'table') return formatTable(rows);
  return [...headerLines(format), ...eventLines(rows, format)];
}

/** The formats a download streams: each event is a line of its own. */
export type StreamFormat = Exclude<ExportFormat, 'table'>;

/** What comes before the events: CSV's header line. */
function headerLines(format: StreamFormat): string[] {
  return format === 'csv' ? [COLUMNS.join(',')] : [];
}

function eventLines(rows: readonly ExportRow[], format: StreamFormat): string[] {
  switch (format) {
    case 'jsonl':
      // Typed as JSON types them: the sequence number a number, the payload an object (CSV keeps text cells).
      return rows.map((row) => JSON.stringify({ ...cells(row), seq: row.seq, payload: row.payload }));
    case 'csv':
      return rows.map((row) => {
        const all = cells(row);
        return COLUMNS.map((c) => csvCell(all[c])).join(',');
      });
  }
}

/**
 * The same lines as `formatEvents`, each ending in a newline, as the pages of events arrive: a download of a
 * long log streams without holding it in memory.
 *
 * @example
 * for await (const text of streamEvents(pagesOf(filter), 'csv')) await stream.write(text);
 */
export async function* streamEvents(
  pages: AsyncIterable<readonly ExportRow[]>,
  format: StreamFormat,
): AsyncGenerator<string> {
  const header = headerLines(format);
  if (header.length > 0) yield `${header.join('\n')}\n`;
  for await (const rows of pages) {
    if (rows.length > 0) yield `${eventLines(rows, format).join('\n')}\n`;
  }
}

const TABLE_COLUMNS = ['seq', 'time', 'actor', 'kind', 'tool', 'status', 'approval', 'payload'] as const;
const PAYLOAD_WIDTH = 60;

function formatTable(rows: readonly ExportRow[]): string[] {
  const body = rows.map((row) => {
    const all = cells(row);
    const payload =
      all.payload.length > PAYLOAD_WIDTH ? `${all.payload.slice(0, PAYLOAD_WIDTH - 1)}…` : all.payload;
    // Control characters from a tampered row must not drive the terminal.
    return TABLE_COLUMNS.map((column) =>
      (column === 'payload' ? payload : all[column]).replace(/\p{Cc}/gu, '?'),
    );
  });
  const header = [...TABLE_COLUMNS];
  const widths = header.map((title, i) =>
    Math.max(title.length, ...body.map((line) => line[i]?.length ?? 0)),
  );
  const render = (line: readonly string[]) =>
    line
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [render(header), ...body.map(render), `${rows.length} event${rows.length === 1 ? '' : 's'}`];
}
