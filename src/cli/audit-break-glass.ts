import { parseArgs } from 'node:util';
import type { ApprovalRecord } from '../approvals/approval.js';
import { unacknowledgedBreakGlass } from '../db/break-glass-store.js';
import { argumentProblem } from './argument-problem.js';
import { withDatabase } from './audit-database.js';
import type { CliIo } from './audit-io.js';

/**
 * `break-glass [--team T…] [--format table|jsonl]`: break-glass approvals no other admin has acknowledged yet,
 * oldest first. Exit 0 when there are none, 1 when some wait (so a scheduled job can alert), 2 for a usage or
 * configuration problem.
 */
export async function runBreakGlass(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  io: CliIo,
  seeHelp: string,
): Promise<number> {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv.slice(1),
      options: { team: { type: 'string' }, format: { type: 'string' } },
    });
  } catch (error) {
    io.err(`${argumentProblem(error)}\n${seeHelp}`);
    return 2;
  }
  const { team, format = 'table' } = parsed.values;
  const problem =
    format !== 'table' && format !== 'jsonl'
      ? '--format must be table or jsonl'
      : typeof team === 'string' && !/^[TE][A-Z0-9]{2,}$/.test(team)
        ? '--team must be a Slack team ID such as T012ABCDEF'
        : undefined;
  if (problem) {
    io.err(`${problem}\n${seeHelp}`);
    return 2;
  }
  return withDatabase(env, io, async (db) => {
    const found = await db.read(() => unacknowledgedBreakGlass(typeof team === 'string' ? team : undefined));
    if (format === 'jsonl') for (const approval of found) io.out(JSON.stringify(jsonLine(approval)));
    else if (found.length === 0) io.out('No unacknowledged break-glass approvals.');
    else for (const line of tableLines(found)) io.out(line);
    return found.length === 0 ? 0 : 1;
  });
}

function jsonLine(approval: ApprovalRecord) {
  return {
    approvalId: approval.id,
    teamId: approval.teamId,
    tool: approval.toolName,
    requester: approval.requesterId,
    brokenBy: approval.breakGlass?.by,
    decidedAt: approval.decidedAt === null ? null : new Date(approval.decidedAt).toISOString(),
    justification: approval.breakGlass?.justification,
  };
}

function tableLines(found: readonly ApprovalRecord[]): string[] {
  const rows = found.map((approval) => {
    const line = jsonLine(approval);
    return [
      line.decidedAt ?? '',
      line.approvalId,
      line.tool,
      line.brokenBy ?? '',
      line.requester,
      line.justification ?? '',
    ];
  });
  const header = ['decided', 'approval', 'tool', 'by', 'requester', 'justification'];
  const widths = header.map((h, i) =>
    Math.max(h.length, ...rows.map((r) => Math.min((r[i] ?? '').length, 60))),
  );
  const format = (cells: string[]) =>
    cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ');
  return [format(header), ...rows.map(format), `${found.length} unacknowledged`];
}
