import type { ApprovalRecord } from '../approvals/approval.js';
import type { Clock } from '../clock.js';
import { AppError } from '../errors.js';
import { closeFrame, openFrame, topFrame } from './agent-frames.js';
import { agentTask } from './agent-tools.js';
import type { ToolCall, ToolOutputItem } from './history.js';
import { type CallRecorder, leaseOf, type RunLoader, type RunRecord } from './ports.js';
import { runEvent } from './run-events.js';
import type { RunState } from './run-state.js';
import type { ToolRegistry } from './tool-registry.js';

export interface AgentCallDeps {
  tools: ToolRegistry;
  store: CallRecorder & Pick<RunLoader, 'approvalsForTurn'>;
  clock: Clock;
}

/**
 * Opens a frame for a call of an agent that may run now (it needs nobody, or it was approved; an approved one
 * is claimed `executing` first, so it starts once), with the task it was given. Returns the state with the
 * agent at work, stored; undefined for any other call, and for one whose arguments do not parse (it gets the
 * error like any call).
 */
export async function openAgentCall(
  deps: AgentCallDeps,
  run: RunRecord,
  state: RunState,
  call: ToolCall,
  approval: ApprovalRecord | undefined,
): Promise<RunState | undefined> {
  const tool = deps.tools.get(call.name);
  if (!tool?.agent || (approval && approval.status !== 'approved')) return undefined;
  const parsed = tool.parseArguments(approval?.editedArguments ?? approval?.arguments ?? call.arguments);
  if (!parsed.ok) return undefined;
  if (approval) {
    const started = runEvent(
      deps.clock,
      run,
      'tool.started',
      { tool: call.name, callId: call.callId },
      approval.id,
    );
    if (!(await deps.store.markExecuting(leaseOf(run), approval.id, [started]))) return undefined;
  }
  const opened = openFrame(state, tool.agent, call, agentTask(parsed.args));
  await deps.store.saveToolOutput(leaseOf(run), { state: opened, item: null, approval: null, audit: [] });
  return opened;
}

/**
 * Ends the frame at work: `output` (the agent's answer, or why it has none) becomes the output of the call
 * that started it, stored with the call's approval, now executed, and the agent below is at work again.
 */
export async function closeAgentCall(
  deps: AgentCallDeps,
  run: RunRecord,
  state: RunState,
  output: string,
  status: ToolOutputItem['data']['status'],
): Promise<RunState> {
  const agent = topFrame(state)?.agent;
  const closed = closeFrame(state, output, status);
  if (!agent || !closed)
    throw new AppError('run.invalid_state', `Run ${run.id} has no agent at work waiting for an answer`);
  const { call } = closed;
  const below = closed.state.frames.at(-1)?.pausedTurn ?? closed.state.pausedTurn;
  const approval = below
    ? (await deps.store.approvalsForTurn(run.id, below.turn)).find((a) => a.callId === call.callId)
    : undefined;
  await deps.store.saveToolOutput(leaseOf(run), {
    state: closed.state,
    item: closed.forHistory[0] ?? null,
    approval: approval ? { id: approval.id, status: 'executed', result: output } : null,
    audit: [
      runEvent(
        deps.clock,
        run,
        'tool.finished',
        {
          tool: call.name,
          callId: call.callId,
          agent,
          ok: status === 'ok',
          outputBytes: Buffer.byteLength(output),
        },
        approval?.id ?? null,
      ),
    ],
  });
  return closed.state;
}
