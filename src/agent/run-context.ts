import { AsyncLocalStorage } from 'node:async_hooks';

/** The run and turn a model call belongs to, for what observes the model (telemetry); never its messages. */
export interface ModelCallScope {
  runId: string;
  teamId: string;
  conversationId: string;
  turn: number;
}

export const modelCallScope = new AsyncLocalStorage<ModelCallScope>();
