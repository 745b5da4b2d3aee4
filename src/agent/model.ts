import { AppError } from '../errors.js';
import type { ChatMessage, ToolCall } from './history.js';
import type { Usage } from './run-state.js';

export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface ModelResponse {
  text: string | null;
  toolCalls: ToolCall[];
  usage: Usage;
}

/** The runner's view of the model: one Chat Completions call. The only implementation that talks to a
 * server lives in openai-client.ts. */
export interface ChatModel {
  /**
   * One model call. When `onTextDelta` is given and the model streams, it receives the answer's text as it
   * arrives (tool-call fragments are assembled silently); the resolved response is the same either way.
   */
  complete(request: {
    messages: ChatMessage[];
    tools: ToolSpec[];
    onTextDelta?: (text: string) => void;
  }): Promise<ModelResponse>;
}

export type ModelFailure = 'rate_limited' | 'unavailable' | 'timeout' | 'bad_response' | 'rejected';

const SENTENCES: Record<ModelFailure, string> = {
  rate_limited:
    'The model service is rate limiting requests right now, so I could not answer; please try again in a minute.',
  unavailable:
    'The model service is unavailable right now, so I could not answer; please try again in a minute.',
  timeout: 'The model service did not answer in time, so I could not answer; please try again.',
  bad_response:
    'The model service sent a response I could not read, so I could not answer; please try again.',
  rejected: 'The model service refused the request (check the bot’s model settings); please try again later.',
};

/** A model call that failed after the client's own retries. */
export class ModelError extends AppError {
  readonly failure: ModelFailure;

  constructor(failure: ModelFailure, message: string, options?: ErrorOptions) {
    super(`model.${failure}`, message, options);
    this.failure = failure;
  }

  /** One sentence for the thread: what failed, and that the user can try again. */
  get userMessage(): string {
    return SENTENCES[this.failure];
  }
}
