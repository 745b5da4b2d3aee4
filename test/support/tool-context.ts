import type { ToolContext } from '../../src/agent/tool.js';

/** A tool context for calling tools directly in tests. */
export const TOOL_CONTEXT: ToolContext = {
  teamId: 'T1',
  conversationId: 'conv_test',
  channelId: 'C1',
  threadTs: '1700000000.000100',
  runId: 'run_test',
  requesterId: 'U1',
};
