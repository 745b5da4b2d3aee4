import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHarness } from '../test/e2e/harness.js';
import { REPO_ROOT, TSX_LOADER } from '../test/support/bot-process.js';
import { reply } from '../test/support/fake-openai.js';
import { type BenchResult, median, round } from './report.js';

export interface ToolOutputSize {
  /** Characters of the MCP tool's output, one case each. */
  outputs: number[];
  repetitions: number;
}

const MIB = 1024 * 1024;
const FIXTURE = join(REPO_ROOT, 'test', 'fixtures', 'mcp-server.ts');

/**
 * A run whose MCP tool returns a long listing, in this process (the bot with `WORKERS=0`, as the e2e tests
 * run it): peak resident set growth around the run, sampled every 2 ms and checked against the process's
 * high-water mark, and what the next model request carried.
 */
export async function benchToolOutput(size: ToolOutputSize): Promise<BenchResult> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-tool-output-'));
  const servers = join(dir, 'mcp.json');
  const policy = join(dir, 'policy.json');
  const records = { command: process.execPath, args: ['--import', TSX_LOADER, FIXTURE] };
  writeFileSync(servers, JSON.stringify({ mcpServers: { records } }));
  writeFileSync(policy, JSON.stringify({ tools: { records__list_entries: { requireApproval: false } } }));
  const h = await startHarness({ env: { MCP_SERVERS_FILE: servers, APPROVAL_POLICY_FILE: policy } });
  let runs = 0;
  const runOnce = async (chars: number) => {
    runs += 1;
    const answer = `Listed ${runs}.`;
    h.model.enqueue(
      reply.toolCalls([{ name: 'records__list_entries', arguments: { chars } }]),
      reply.text(answer),
    );
    const asked = h.model.requests.length;
    const before = process.memoryUsage().rss;
    const highWater = process.resourceUsage().maxRSS;
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 2);
    const started = performance.now();
    await h.mention(`list ${chars} characters of entries`);
    await h.waitForText((text) => text === answer);
    const ms = performance.now() - started;
    clearInterval(sampler);
    // A high-water mark raised during the run is a peak between two samples (a synchronous write holds the thread).
    const raised = process.resourceUsage().maxRSS;
    if (raised > highWater) peak = Math.max(peak, raised * 1024);
    const tool = h.model.requests[asked + 1]?.messages.find((m) => m.role === 'tool')?.content;
    const sent = typeof tool === 'string' ? tool.length : 0;
    return { growth: (peak - before) / MIB, ms, sent };
  };
  try {
    // Code loaded on first use, and the MCP connection, before anything is measured.
    await runOnce(1000);
    const rows = [];
    for (const chars of size.outputs) {
      const samples = [];
      for (let i = 0; i < size.repetitions; i += 1) samples.push(await runOnce(chars));
      rows.push({
        case: `${chars.toLocaleString('en-US')} characters`,
        metrics: {
          'peak RSS growth MiB (median)': round(median(samples.map((s) => s.growth)), 1),
          'peak RSS growth MiB (max)': round(Math.max(...samples.map((s) => s.growth)), 1),
          'run ms (median)': round(median(samples.map((s) => s.ms)), 0),
          'characters sent to the model': Math.max(...samples.map((s) => s.sent)),
        },
      });
    }
    return {
      id: 'tool-output',
      title: 'A long MCP tool output: cut for the model, whole in the audit log',
      rows,
      targets: [],
      notes: [
        'One run per sample, in this process (WORKERS=0, SQLite): the MCP call over stdio, the tool.finished audit event holding the whole output, the next model request with the cut one. The MCP server is a child process, not counted.',
        'Peak RSS growth: the highest resident set seen during the run (sampled every 2 ms, and the process high-water mark) less the resident set before it; a later run reuses memory an earlier one freed.',
      ],
    };
  } finally {
    await h.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
