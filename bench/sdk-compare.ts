import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Agent,
  type AgentInputItem,
  type Model,
  type ModelResponse,
  RunState,
  run,
  setTracingDisabled,
  tool,
  Usage,
} from '@openai/agents';
import { z } from 'zod';
import type { HistoryItem } from '../src/agent/history.js';
import { parseRunState, serializeRunState } from '../src/agent/run-state.js';
import { type BenchResult, median, type Row, type TargetCheck, target } from './report.js';
import { createStoreFixture, priorItem } from './store-fixture.js';

export interface SdkCompareSize {
  lengths: number[];
  repetitions: number;
}

/** The same synthetic conversation as the SDK's input items. */
function toSdkItem(item: HistoryItem): AgentInputItem {
  switch (item.kind) {
    case 'user_message':
      return { role: 'user', content: item.data.text };
    case 'thread_context':
      return { role: 'user', content: item.data.messages.map((m) => `${m.author}: ${m.text}`).join('\n') };
    case 'assistant_message':
      return {
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: item.data.text }],
      };
    case 'tool_call':
      return {
        type: 'function_call',
        callId: item.data.callId,
        name: item.data.name,
        arguments: item.data.arguments,
        status: 'completed',
      };
    case 'tool_output':
      return {
        type: 'function_call_result',
        callId: item.data.callId,
        name: item.data.name,
        status: 'completed',
        output: item.data.output,
      };
    case 'summary':
      return { role: 'system', content: item.data.text };
  }
}

/** The SDK agent with the same tool, gated the same way, and a model that asks for it at once. */
function sdkAgent() {
  let calls = 0;
  const model: Model = {
    async getResponse(): Promise<ModelResponse> {
      calls += 1;
      return {
        usage: new Usage(),
        output: [
          {
            type: 'function_call',
            callId: `call_${calls}`,
            name: 'create_note',
            arguments: '{"text":"benchmark note"}',
            status: 'completed',
          },
        ],
      };
    },
    getStreamedResponse() {
      throw new Error('streaming is not used by the benchmark');
    },
  };
  const createNote = tool({
    name: 'create_note',
    description: 'Adds a note.',
    parameters: z.object({ text: z.string() }),
    needsApproval: true,
    execute: async ({ text }) => `Created note: ${text}`,
  });
  return new Agent({
    name: 'assistant',
    instructions: 'You are a helpful assistant.',
    model,
    tools: [createNote],
  });
}

function timed<T>(fn: () => T): { value: T; ms: number } {
  const started = performance.now();
  const value = fn();
  return { value, ms: performance.now() - started };
}

async function timedAsync<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - started };
}

/**
 * Side by side with `@openai/agents`: the same conversations paused on the same gated tool. Ours: serialise
 * the run state, and restore it (read the run row and parse it); size = the state plus the items the pause
 * appends. The SDK: `RunState.toString()` and `RunState.fromString()`, size of that string.
 */
export async function benchSdkCompare(size: SdkCompareSize): Promise<BenchResult> {
  setTracingDisabled(true);
  const dir = mkdtempSync(join(tmpdir(), 'bot-bench-sdk-'));
  const fixture = await createStoreFixture(join(dir, 'bot.db'));
  const agent = sdkAgent();
  try {
    const measure = async (length: number) => {
      const ours = { save: [] as number[], restore: [] as number[], bytes: [] as number[] };
      const sdk = { save: [] as number[], restore: [] as number[], bytes: [] as number[] };
      for (let rep = 0; rep < size.repetitions; rep++) {
        const { thread, conversationId } = await fixture.seedThread(length);
        const { approval } = await fixture.pause(thread, conversationId);
        const restored = await timedAsync(async () => {
          const record = await fixture.store.getRun(approval.runId);
          return record ? parseRunState(record.state) : undefined;
        });
        if (!restored.value?.ok) throw new Error('our run state did not parse');
        const state = restored.value.state;
        const saved = timed(() => serializeRunState(state));
        const appended = (await fixture.store.loadHistory(conversationId)).filter(
          (item) => item.runId === approval.runId,
        );
        ours.save.push(saved.ms);
        ours.restore.push(restored.ms);
        ours.bytes.push(
          Buffer.byteLength(saved.value) +
            appended.reduce((n, i) => n + Buffer.byteLength(JSON.stringify(i.data)), 0),
        );

        const input = Array.from({ length }, (_, i) => toSdkItem(priorItem(i)));
        input.push({ role: 'user', content: 'please add a note' });
        const result = await run(agent, input);
        if (result.interruptions.length !== 1) throw new Error('the SDK run did not pause on its approval');
        const serialised = timed(() => result.state.toString());
        const started = performance.now();
        const back = await RunState.fromString(agent, serialised.value);
        sdk.restore.push(performance.now() - started);
        if (back.getInterruptions().length !== 1) throw new Error('the SDK state lost its interruption');
        sdk.save.push(serialised.ms);
        sdk.bytes.push(Buffer.byteLength(serialised.value));
      }
      return { ours, sdk };
    };
    await measure(size.lengths[0] ?? 0); // warm-up, dropped
    const rows: Row[] = [];
    const targets: TargetCheck[] = [];
    for (const length of size.lengths) {
      const { ours, sdk } = await measure(length);
      const m = {
        'ours save ms': median(ours.save),
        'sdk toString ms': median(sdk.save),
        'ours restore ms': median(ours.restore),
        'sdk fromString ms': median(sdk.restore),
        'ours bytes': median(ours.bytes),
        'sdk bytes': median(sdk.bytes),
      };
      const ratios = {
        'save ratio': m['ours save ms'] / m['sdk toString ms'],
        'restore ratio': m['ours restore ms'] / m['sdk fromString ms'],
        'size ratio': m['ours bytes'] / m['sdk bytes'],
      };
      rows.push({ case: `${length} items`, metrics: { ...m, ...ratios } });
      if (length >= 100) {
        for (const [name, value] of Object.entries(ratios))
          targets.push(target(`${name} (ours / SDK) at ${length} items`, value, 0.5, '×'));
      }
    }
    return {
      id: 'sdk-compare',
      title: 'Run state side by side with @openai/agents (RunState toString / fromString)',
      rows,
      targets,
      notes: [
        `medians of ${size.repetitions} pauses per length; ours restore includes reading the run row from SQLite; the SDK string holds the whole history, ours only the paused turn (history rows are appended once)`,
      ],
    };
  } finally {
    await fixture.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
