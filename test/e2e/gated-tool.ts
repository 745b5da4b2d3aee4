import { z } from 'zod';
import { defineTool } from '../../src/agent/tool.js';
import { waitUntil } from '../support/wait.js';

/** A tool that runs until the test releases it, so a stop arrives while the run is busy. */
export function gatedTool() {
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let started = false;
  const tool = defineTool({
    name: 'slow_lookup',
    description: 'Looks something up, slowly.',
    parameters: z.object({}),
    needsApproval: false,
    execute: async () => {
      started = true;
      await released;
      return 'looked up';
    },
  });
  const whenStarted = () =>
    waitUntil(() => started || undefined, { timeoutMs: 5_000, message: 'the tool did not start' });
  return { tool, release, whenStarted };
}
