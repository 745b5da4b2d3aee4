import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { z } from 'zod';
import type { ChatMessage } from '../../agent/history.js';
import { type ChatModel, ModelError, type ModelResponse, type ToolSpec } from '../../agent/model.js';
import type { Logger } from '../../logger.js';
import { pause, retryDelayMs } from './cut-answers.js';
import {
  cannotStreamWithTools,
  ErrorBodies,
  readServerError,
  refusesStreamOptions,
  toModelError,
} from './model-server-errors.js';
import {
  completionUsageSchema,
  readCompletionStream,
  readUsage,
  toolArgumentsSchema,
} from './openai-stream.js';
import { messageServerFields, toolCallServerFields } from './server-fields.js';
import { StreamEnds } from './stream-ends.js';

export interface OpenAIModelOptions {
  apiKey: string;
  baseURL: string | undefined;
  model: string;
  /** Retries for 429/5xx/timeouts (the SDK's, honouring Retry-After) and for responses that broke off, together. */
  maxRetries?: number;
  timeoutMs?: number;
  systemPrompt: string;
  /** Stream answers (`stream: true`) when the caller wants text deltas; off means one JSON response. */
  stream?: boolean;
  /** Where the client says, once, how it adapted to what the server refused. */
  logger?: Logger;
}

/**
 * What we read of a completion; validated, because any OpenAI-compatible server may answer. A tool call's id
 * may be empty (Gemini) and its `type` missing (Mistral); the server's own fields are kept as they came.
 */
const completionSchema = z.object({
  choices: z
    .array(
      z.object({
        message: z.looseObject({
          content: z.string().nullish(),
          tool_calls: z
            .array(
              z.looseObject({
                id: z.string().nullish(),
                function: z.object({ name: z.string().min(1), arguments: toolArgumentsSchema }),
              }),
            )
            .nullish(),
        }),
      }),
    )
    .min(1, 'the response has no choices'),
  usage: completionUsageSchema.nullish(),
});

type RequestBody = OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming;
type RequestOptions = { maxRetries: number; signal?: AbortSignal };

/**
 * The only module that imports `openai`: a Chat Completions model for the runner. It adapts, once for the
 * life of the process, to what a server refuses: a 400/422 naming `stream_options` (the request is sent again
 * without it, and it is never sent again), and a server that cannot stream when the request has tools (the
 * request is sent again without streaming, and requests with tools are not streamed again).
 */
export function createOpenAIModel(options: OpenAIModelOptions): ChatModel {
  const bodies = new ErrorBodies();
  const ends = new StreamEnds(bodies.fetch);
  const maxRetries = options.maxRetries ?? 2;
  const client = new OpenAI({
    apiKey: options.apiKey,
    baseURL: options.baseURL,
    maxRetries,
    timeout: options.timeoutMs ?? 60_000,
    fetch: ends.fetch,
  });
  let sendStreamOptions = true;
  let streamWithTools = true;

  const streamed = async (
    body: RequestBody,
    onTextDelta: (text: string) => void,
    request: RequestOptions,
  ) => {
    const { data, response } = await client.chat.completions
      .create(
        {
          ...body,
          stream: true,
          ...(sendStreamOptions ? { stream_options: { include_usage: true } } : {}),
        },
        request,
      )
      .withResponse();
    return readCompletionStream(data, onTextDelta, () => ends.sawEnd(response));
  };

  /** Whether the failure of a streamed request says how to send it so that the server accepts it. */
  const adapt = (error: unknown, hasTools: boolean): boolean => {
    if (!(error instanceof OpenAI.APIError) || error.status === undefined) return false;
    const server = readServerError(error, bodies.bodyOf(error));
    if (sendStreamOptions && refusesStreamOptions(server)) {
      sendStreamOptions = false;
      options.logger?.warn(
        'the model server refuses stream_options; requests are sent without it from now on',
        {
          status: server.status,
          server: server.message,
        },
      );
      return true;
    }
    if (hasTools && streamWithTools && cannotStreamWithTools(server.message)) {
      streamWithTools = false;
      options.logger?.warn(
        'the model server cannot stream with tools; requests with tools are not streamed from now on',
        { status: server.status, server: server.message },
      );
      return true;
    }
    return false;
  };

  /** One request, sent again as the server needs (each adaptation happens at most once, so this loop ends). */
  const attempt = async (
    body: RequestBody,
    hasTools: boolean,
    onTextDelta: ((text: string) => void) | undefined,
    request: RequestOptions,
  ): Promise<ModelResponse> => {
    for (;;) {
      if (options.stream === false || !onTextDelta || (hasTools && !streamWithTools)) {
        return readCompletion(await client.chat.completions.create(body, request));
      }
      try {
        return await streamed(body, onTextDelta, request);
      } catch (error) {
        if (!adapt(error, hasTools)) throw error;
      }
    }
  };

  return {
    /**
     * A response that breaks off after it began (a reset connection, a stream without its end) is asked for
     * again, within the same retry budget as 429/5xx/timeouts (the SDK gets what is left of it); text already
     * streamed of the broken answer is withdrawn through `onTextCut` first, so it never passes for an answer.
     */
    async complete({ messages, tools, onTextDelta, onTextCut, signal, model, instructions }) {
      // Notes of the bot's own that open the conversation (a summary of its older part) join the instructions in
      // one system message: several chat templates (Mistral's, Llama's) refuse a system message in any other place.
      const opening = messages.findIndex((message) => message.role !== 'system');
      const notes = messages.slice(0, opening === -1 ? messages.length : opening);
      const body: RequestBody = {
        model: model ?? options.model,
        messages: [
          {
            role: 'system' as const,
            content: [instructions ?? options.systemPrompt, ...notes.map((note) => note.content)].join(
              '\n\n',
            ),
          },
          ...messages.slice(notes.length).map(toOpenAIMessage),
        ],
        ...(tools.length > 0 ? { tools: tools.map(toOpenAITool) } : {}),
      };
      for (let retries = 0; ; retries += 1) {
        let streamedText = '';
        const onDelta = onTextDelta
          ? (text: string) => {
              streamedText += text;
              onTextDelta(text);
            }
          : undefined;
        const request = { maxRetries: maxRetries - retries, ...(signal ? { signal } : {}) };
        try {
          return await attempt(body, tools.length > 0, onDelta, request);
        } catch (error) {
          const failure = toModelError(error, bodies);
          if (signal?.aborted) throw failure;
          if (streamedText !== '') onTextCut?.(streamedText);
          if (failure.failure !== 'interrupted' || retries >= maxRetries) throw failure;
          options.logger?.warn('the model response broke off; asking again', {
            retry: retries + 1,
            error: failure.message,
          });
          await pause(retryDelayMs(retries + 1), signal);
          if (signal?.aborted) throw failure;
        }
      }
    },
  };
}

function readCompletion(raw: unknown): ModelResponse {
  const parsed = completionSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ModelError(
      'bad_response',
      `Unreadable completion at ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`,
    );
  }
  const [choice] = parsed.data.choices;
  const message = choice?.message;
  const toolCalls = (message?.tool_calls ?? []).map((call) => {
    const serverFields = toolCallServerFields(call);
    return {
      callId: call.id ?? '',
      name: call.function.name,
      arguments: call.function.arguments ?? '',
      ...(serverFields ? { serverFields } : {}),
    };
  });
  const serverFields = message ? messageServerFields(message, toolCalls.length > 0) : undefined;
  return {
    text: message?.content ?? null,
    toolCalls,
    usage: readUsage(parsed.data.usage),
    ...(serverFields ? { serverFields } : {}),
  };
}

function toOpenAIMessage(message: ChatMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
    case 'user':
      return { role: message.role, content: message.content };
    case 'tool':
      return { role: 'tool', tool_call_id: message.callId, content: message.content };
    case 'assistant':
      // The server's own fields go first, so they can never replace the standard ones.
      return {
        ...message.serverFields,
        role: 'assistant',
        content: message.content,
        ...(message.toolCalls.length > 0
          ? {
              tool_calls: message.toolCalls.map((call) => ({
                ...call.serverFields,
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
