import { DEFAULT_AGENT } from '../approvals/approval.js';
import type { HistoryItem, StoredItem, ToolCall, ToolOutputItem } from './history.js';
import type { AgentFrame, PausedTurn, RunState } from './run-state.js';

/*
 * The run state as a stack: the bot's own agent at the bottom (top-level `pausedTurn`, its conversation in the
 * thread's history), each agent called as a tool in a frame above the agent that called it. Only the top of
 * the stack works; the agents below wait for its answer. Pure functions of the state.
 */

/** The frame at work, or undefined when the bot's own agent is. */
export function topFrame(state: RunState): AgentFrame | undefined {
  return state.frames.at(-1);
}

/** The agents the call of the agent at work passes through, outermost first: empty for the bot's own agent. */
export function agentChain(state: RunState): string[] {
  return state.frames.map((frame) => frame.agent);
}

/** The agent at work: what a policy rule sees as `agent`. */
export function agentAtWork(state: RunState): string {
  return topFrame(state)?.agent ?? DEFAULT_AGENT;
}

/** The paused turn of the agent at work. */
export function topPausedTurn(state: RunState): PausedTurn | null {
  const frame = topFrame(state);
  return frame ? frame.pausedTurn : state.pausedTurn;
}

export function withTopPausedTurn(state: RunState, pausedTurn: PausedTurn | null): RunState {
  const frame = topFrame(state);
  if (!frame) return { ...state, pausedTurn };
  return { ...state, frames: [...state.frames.slice(0, -1), { ...frame, pausedTurn }] };
}

/**
 * Adds items of the agent at work to its conversation: a nested agent's go into its frame, and nothing is
 * left for the thread's history; the bot's own agent's are returned for the history.
 */
export function recordAtTop<I extends HistoryItem>(
  state: RunState,
  items: I[],
  turn: number,
): { state: RunState; forHistory: I[] } {
  const frame = topFrame(state);
  if (!frame) return { state, forHistory: items };
  const added = items.map((item) => ({ turn, item }));
  const frames = [...state.frames.slice(0, -1), { ...frame, items: [...frame.items, ...added] }];
  return { state: { ...state, frames }, forHistory: [] };
}

/** The frame at work made one more model call. */
export function countFrameTurn(state: RunState): RunState {
  const frame = topFrame(state);
  if (!frame) return state;
  return { ...state, frames: [...state.frames.slice(0, -1), { ...frame, turns: frame.turns + 1 }] };
}

/**
 * A nested agent's conversation as the model reads it. It is not the thread's history: its items have no stored
 * sequence number (their place in the frame stands in), and the context budget does not summarise them.
 */
export function frameHistory(frame: AgentFrame): StoredItem[] {
  return frame.items.map(({ turn, item }, index) => ({ ...item, seq: index, runId: null, turn }));
}

/** Starts `agent` on `task` for `call` of the agent at work: the new frame is now at work. */
export function openFrame(state: RunState, agent: string, call: ToolCall, task: string): RunState {
  const userId = agentAtWork(state);
  const frame: AgentFrame = {
    agent,
    callId: call.callId,
    turns: 0,
    items: [{ turn: state.turn, item: { kind: 'user_message', data: { text: task, userId } } }],
    pausedTurn: null,
  };
  return { ...state, frames: [...state.frames, frame] };
}

/**
 * Ends the frame at work with `output` as the output of the call that started it: the agent below is at work
 * again, that call done. Returns the call and its output item (for the history when the bot's own agent made
 * the call, already in the frame below otherwise).
 */
export function closeFrame(
  state: RunState,
  output: string,
  status: ToolOutputItem['data']['status'],
): { state: RunState; call: ToolCall; forHistory: ToolOutputItem[] } | undefined {
  const frame = topFrame(state);
  if (!frame) return undefined;
  const below: RunState = { ...state, frames: state.frames.slice(0, -1) };
  const paused = topPausedTurn(below);
  const call = paused?.calls.find((c) => c.callId === frame.callId);
  if (!paused || !call) return undefined;
  const calls = paused.calls.map((c) => (c.callId === call.callId ? { ...c, done: true } : c));
  const settled = withTopPausedTurn(below, { turn: paused.turn, calls });
  const item: ToolOutputItem = {
    kind: 'tool_output',
    data: { callId: call.callId, name: call.name, output, status },
  };
  const recorded = recordAtTop(settled, [item], paused.turn);
  return { state: recorded.state, call, forHistory: recorded.forHistory };
}

/** Every call waiting in any paused turn of the stack: what a resume needs the tools of. */
export function waitingCalls(state: RunState): PausedTurn['calls'] {
  return [state.pausedTurn, ...state.frames.map((frame) => frame.pausedTurn)].flatMap(
    (paused) => paused?.calls.filter((call) => !call.done) ?? [],
  );
}

/**
 * Whether the agent a call started is at work in the state (its frame is open): that call was not cut off, it
 * goes on, and its answer is still to come. `agentChain`: the agents the call was made through, outermost first.
 */
export function agentCallAtWork(
  state: RunState,
  call: { callId: string; toolName: string; agentChain?: readonly string[] | undefined },
): boolean {
  const chain = call.agentChain ?? [];
  return state.frames.some(
    (frame, index) =>
      frame.callId === call.callId &&
      frame.agent === call.toolName &&
      index === chain.length &&
      state.frames.slice(0, index).every((below, at) => below.agent === chain[at]),
  );
}
