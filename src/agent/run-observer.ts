import { agentChain, topFrame } from './agent-frames.js';
import type { TextStreamHooks } from './model-turn.js';
import type { RunState } from './run-state.js';
import type { ToolProgress } from './turn-settler.js';

/** What the runner may say in the thread while it works (e.g. that a call was approved automatically). */
export interface RunHooks {
  notify(text: string): Promise<void>;
}

export const NO_HOOKS: RunHooks = { notify: async () => undefined };

/** Hooks a caller passes to `advance` to show the run's progress while it happens (never persisted). */
export interface RunObserver extends TextStreamHooks {
  /** Where each tool call of the run stands, in call order (`running`: it is about to run). */
  onToolProgress?: (progress: ToolProgress) => void;
  /** Something to say in the thread while the run works (e.g. that a call was approved automatically). */
  notify?: (text: string) => Promise<void>;
}

/** Progress of a nested agent's calls names the chain of agents: "triage → create_note". */
export function namedForChain(
  observer: RunObserver | undefined,
  chain: readonly string[],
): RunObserver | undefined {
  const show = observer?.onToolProgress;
  if (!show || chain.length === 0) return observer;
  return {
    ...observer,
    onToolProgress: (progress) => show({ ...progress, toolName: [...chain, progress.toolName].join(' → ') }),
  };
}

/** The call of the nested agent at work has its output: shown as settled, named for the chain below it. */
export function settledAgentProgress(
  observer: RunObserver | undefined,
  state: RunState,
  output: string,
  status: 'ok' | 'error',
): void {
  const frame = topFrame(state);
  if (!frame) return;
  const toolName = agentChain(state).join(' → ');
  observer?.onToolProgress?.({ kind: 'settled', callId: frame.callId, toolName, status, output });
}
