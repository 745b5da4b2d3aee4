import OpenAI, {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  InternalServerError,
  RateLimitError,
} from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { z } from 'zod';
import type { ChatMessage } from './history.js';
import { type ChatModel, ModelError, type ModelResponse, type ToolSpec } from './model.js';
import { readCompletionStream } from './openai-stream.js';

export interface OpenAIModelOptions {
  apiKey: string;
  baseURL: string | undefined;
  model: string;
  /** Retries for 429/5xx/timeouts inside the client (it honours Retry-After). */
  maxRetries?: number;
  timeoutMs?: number;
  systemPrompt: string;
  /** Stream answers (`stream: true`) when the caller wants text deltas; off means one JSON response. */
  stream?: boolean;
}

/** What we read of a completion; validated, because any OpenAI-compatible server may answer. */
const completionSchema = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.string().nullish(),
          tool_calls: z
            .array(
              z.object({
                id: z.string(),
                type: z.string().optional(),
                function: z.object({ name: z.string(), arguments: z.string().nullish() }),
              }),
            )
            .nullish(),
        }),
      }),
    )
    .min(1, 'the response has no choices'),
  usage: z
    .object({ prompt_tokens: z.number(), completion_tokens: z.number(), total_tokens: z.number() })
    .nullish(),
});

/** The only module that imports `openai`: a Chat Completions model for the runner. */
export function createOpenAIModel(options: OpenAIModelOptions): ChatModel {
  const client = new OpenAI({
    apiKey: options.apiKey,
    baseURL: options.baseURL,
    maxRetries: options.maxRetries ?? 2,
    timeout: options.timeoutMs ?? 60_000,
  });
  return {
    async complete({ messages, tools, onTextDelta }) {
      const body = {
        model: options.model,
        messages: [
          { role: 'system' as const, content: options.systemPrompt },
          ...messages.map(toOpenAIMessage),
        ],
        ...(tools.length > 0 ? { tools: tools.map(toOpenAITool) } : {}),
      };
      try {
        if (options.stream !== false && onTextDelta) {
          const stream = await client.chat.completions.create({
            ...body,
            stream: true,
            stream_options: { include_usage: true },
          });
          return await readCompletionStream(stream, onTextDelta);
        }
        return readCompletion(await client.chat.completions.create(body));
      } catch (error) {
        throw error instanceof ModelError ? error : toModelError(error);
      }
    },
  };
}

function readCompletion(raw: unknown): ModelResponse {
  const parsed = completionSchema.safeParse(raw);
  if (!parsed.success) {
    throw new ModelError(
      'bad_response',
      `Unreadable completion: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
    );
  }
  const [choice] = parsed.data.choices;
  const message = choice?.message;
  const usage = parsed.data.usage;
  return {
    text: message?.content ?? null,
    toolCalls: (message?.tool_calls ?? []).map((call) => ({
      callId: call.id,
      name: call.function.name,
      arguments: call.function.arguments ?? '',
    })),
    usage: {
      promptTokens: usage?.prompt_tokens ?? 0,
      completionTokens: usage?.completion_tokens ?? 0,
      totalTokens: usage?.total_tokens ?? 0,
    },
  };
}

function toModelError(error: unknown): ModelError {
  const options = { cause: error };
  if (error instanceof APIConnectionTimeoutError)
    return new ModelError('timeout', 'Model request timed out', options);
  if (error instanceof APIConnectionError)
    return new ModelError('unavailable', 'Model server unreachable', options);
  if (error instanceof RateLimitError) return new ModelError('rate_limited', 'Model rate limited', options);
  if (error instanceof InternalServerError) {
    return new ModelError('unavailable', `Model server error ${error.status}`, options);
  }
  if (error instanceof APIError)
    return new ModelError('rejected', `Model request refused: ${error.status}`, options);
  return new ModelError('bad_response', 'Model response could not be read', options);
}

function toOpenAIMessage(message: ChatMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
    case 'user':
      return { role: message.role, content: message.content };
    case 'tool':
      return { role: 'tool', tool_call_id: message.callId, content: message.content };
    case 'assistant':
      return {
        role: 'assistant',
        content: message.content,
        ...(message.toolCalls.length > 0
          ? {
              tool_calls: message.toolCalls.map((call) => ({
                id: call.callId,
                type: 'function' as const,
                function: { name: call.name, arguments: call.arguments },
              })),
            }
          : {}),
      };
  }
}

function toOpenAITool(tool: ToolSpec): ChatCompletionTool {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
}
