import type { ApprovalRecord } from '../approvals/approval.js';
import type { ToolCall, ToolOutputItem, ToolOutputStatus } from './history.js';
import type { RunRecord } from './ports.js';
import type { ToolContext } from './tool.js';

/** A tool call's output as the history keeps it. */
export function toolOutput(call: ToolCall, output: string, status: ToolOutputStatus): ToolOutputItem {
  return { kind: 'tool_output', data: { callId: call.callId, name: call.name, output, status } };
}

/** What a tool is told of the run that calls it. */
export function toolContext(run: RunRecord): ToolContext {
  return {
    teamId: run.teamId,
    conversationId: run.conversationId,
    channelId: run.channelId,
    threadTs: run.threadTs,
    runId: run.id,
    requesterId: run.requesterId,
  };
}

/** The model is told that a person changed its arguments, and to what. */
export function editedOutput(approval: ApprovalRecord, output: string): string {
  const editor = approval.decidedBy ? `<@${approval.decidedBy}>` : 'A person';
  return `${editor} edited the arguments before approving. The tool ran with ${approval.editedArguments} instead of ${approval.arguments}. Output: ${output}`;
}
