import { AppError } from '../errors.js';
import type { ChatMessage, ServerFields, ToolCall } from './history.js';
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
  /** Fields of the assistant message the server needs back with it (e.g. `reasoning_content`). */
  serverFields?: ServerFields;
}

/** The runner's view of the model: one Chat Completions call. The only implementation that talks to a
 * server lives in src/model/openai/openai-client.ts. */
export interface ChatModel {
  /**
   * One model call. When `onTextDelta` is given and the model streams, it receives the answer's text as it
   * arrives (tool-call fragments are assembled silently); the resolved response is the same either way.
   */
  complete(request: {
    messages: ChatMessage[];
    tools: ToolSpec[];
    onTextDelta?: (text: string) => void;
    /**
     * The text handed to `onTextDelta` since the request (or its last retry) began was cut off (the connection
     * broke mid-answer): it is no answer, and the request is sent again unless the retries are spent.
     */
    onTextCut?: (text: string) => void;
    /** Abandons the request (someone stopped the run); the call then rejects. */
    signal?: AbortSignal;
    /** Another model of the same server (an agent of the agents file); default the client's own. */
    model?: string;
    /** Another system prompt (an agent's instructions); default the client's own. */
    instructions?: string;
  }): Promise<ModelResponse>;
}

export type ModelFailure =
  | 'rate_limited'
  | 'unavailable'
  | 'timeout'
  | 'interrupted'
  | 'bad_response'
  | 'too_long'
  | 'rejected';

const SENTENCES: Record<ModelFailure, string> = {
  rate_limited:
    'The model service is rate limiting requests right now, so I could not answer; please try again in a minute.',
  unavailable:
    'The model service is unavailable right now, so I could not answer; please try again in a minute.',
  timeout: 'The model service did not answer in time, so I could not answer; please try again.',
  interrupted:
    'The connection to the model service broke off in the middle of its answer, so I could not answer; please try again.',
  bad_response:
    'The model service sent a response I could not read, so I could not answer; please try again.',
  too_long:
    'This conversation is longer than the model can read, even with its older part summarised, so I could not answer; please start a new thread.',
  rejected: 'The model service refused this request (check the bot’s model settings), so I could not answer.',
};

/** At most this many characters of the server's own reason reach the thread. */
const REASON_LIMIT = 160;

/** A model call that failed after the client's own retries. */
export class ModelError extends AppError {
  readonly failure: ModelFailure;
  /** Why the server refused, in its own words (short), when it said why. */
  readonly reason: string | undefined;
  /** With `too_long`: the context the server said it has, in tokens, when it said so. */
  readonly contextTokens: number | undefined;

  constructor(
    failure: ModelFailure,
    message: string,
    options?: ErrorOptions & { reason?: string | undefined; contextTokens?: number | undefined },
  ) {
    super(`model.${failure}`, message, options);
    this.failure = failure;
    this.reason = options?.reason;
    this.contextTokens = options?.contextTokens;
  }

  /** One sentence for the thread: what failed, and whether trying again can help. */
  get userMessage(): string {
    if (this.failure === 'rejected' && this.reason) {
      return `The model service refused this request (“${shortReason(this.reason)}”), so I could not answer.`;
    }
    return SENTENCES[this.failure];
  }
}

/** The first sentence or line of a server's message, cut at a word near `REASON_LIMIT` characters. */
export function shortReason(message: string): string {
  const first = message.trim().split(/\n|(?<=[.!?])\s/, 1)[0] ?? '';
  const line = first.replace(/[.\s]+$/, '');
  if (line.length <= REASON_LIMIT) return line;
  const cut = line.slice(0, REASON_LIMIT);
  const space = cut.lastIndexOf(' ');
  return `${(space > REASON_LIMIT / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}
