import { z } from 'zod';

/** Where a tool call happens and on whose behalf. Plain data: tools get their services from their factory. */
export interface ToolContext {
  teamId: string;
  conversationId: string;
  channelId: string;
  threadTs: string;
  runId: string;
  /** The person whose message started the run. */
  requesterId: string;
}

export type ApprovalPredicate<Args> = (args: Args, context: ToolContext) => boolean | Promise<boolean>;

export interface ToolDefinition<Schema extends z.ZodObject> {
  /** snake_case; the model calls the tool by this name. */
  name: string;
  description: string;
  parameters: Schema;
  /** Default false. The policy file may override it per tool. */
  needsApproval?: boolean | ApprovalPredicate<z.infer<Schema>>;
  /** The text returned becomes the tool output the model reads. Throwing reports a tool failure to the model. */
  execute: (args: z.infer<Schema>, context: ToolContext) => Promise<string> | string;
  /**
   * What the call would do, in one or two lines of Slack mrkdwn (every value escaped), read from real data
   * before the card is posted. Undefined: nothing to say. A failure or a slow answer only leaves it out.
   */
  preview?: (args: z.infer<Schema>, context: ToolContext) => Promise<string | undefined>;
}

export type ParsedArguments = { ok: true; args: Record<string, unknown> } | { ok: false; error: string };

/**
 * A tool with its argument type erased, so tools of different schemas share one registry. The typed schema
 * stays inside the closures: arguments are always parsed before the predicate or `execute` sees them.
 */
export interface AgentTool {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the arguments, as sent to the model. */
  readonly jsonSchema: Record<string, unknown>;
  /** True or false when fixed, 'predicate' when it depends on the arguments. */
  readonly approvalMode: boolean | 'predicate';
  parseArguments(raw: string): ParsedArguments;
  needsApproval(args: Record<string, unknown>, context: ToolContext): Promise<boolean>;
  execute(args: Record<string, unknown>, context: ToolContext): Promise<string>;
  /** The tool's own preview of a call whose arguments parsed (see `ToolDefinition.preview`). */
  preview?(args: Record<string, unknown>, context: ToolContext): Promise<string | undefined>;
  /**
   * Set for an agent of the agents file called as a tool: the run opens a frame for it instead of calling
   * `execute` (src/agent/agent-tools.ts).
   */
  readonly agent?: string;
}

/**
 * Defines a tool from a zod object schema.
 *
 * @example
 * const echo = defineTool({ name: 'echo', description: 'Echoes text', parameters: z.object({ text: z.string() }),
 *   execute: ({ text }) => text });
 */
export function defineTool<Schema extends z.ZodObject>(definition: ToolDefinition<Schema>): AgentTool {
  const { parameters } = definition;
  const jsonSchema: Record<string, unknown> = { ...z.toJSONSchema(parameters) };
  delete jsonSchema.$schema;
  const approval = definition.needsApproval ?? false;
  const parseOrThrow = (args: Record<string, unknown>): z.infer<Schema> => parameters.parse(args);
  return {
    name: definition.name,
    description: definition.description,
    jsonSchema,
    approvalMode: typeof approval === 'function' ? 'predicate' : approval,
    parseArguments(raw) {
      return parseToolArguments(raw, parameters);
    },
    async needsApproval(args, context) {
      return typeof approval === 'function' ? await approval(parseOrThrow(args), context) : approval;
    },
    async execute(args, context) {
      return await definition.execute(parseOrThrow(args), context);
    },
    ...(definition.preview ? { preview: previewOf(definition.preview, parseOrThrow) } : {}),
  };
}

function previewOf<Args>(
  preview: (args: Args, context: ToolContext) => Promise<string | undefined>,
  parse: (args: Record<string, unknown>) => Args,
): NonNullable<AgentTool['preview']> {
  return async (args, context) => await preview(parse(args), context);
}

/** Parses model-sent arguments: valid JSON, a JSON object, and valid for the schema, or a readable error. */
export function parseToolArguments(raw: string, schema: z.ZodObject): ParsedArguments {
  const json = parseArgumentsObject(raw);
  if (!json.ok) return json;
  const result = schema.safeParse(json.args);
  if (!result.success) {
    const details = result.error.issues.map(
      (issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`,
    );
    return { ok: false, error: `The arguments are invalid: ${details.join('; ')}.` };
  }
  return { ok: true, args: result.data };
}

/** The first step of every argument check: valid JSON (empty means `{}`) and a JSON object. */
export function parseArgumentsObject(raw: string): ParsedArguments {
  let value: unknown;
  try {
    value = raw.trim() === '' ? {} : JSON.parse(raw);
  } catch (error) {
    return {
      ok: false,
      error: `The arguments are not valid JSON (${error instanceof Error ? error.message : 'parse error'}).`,
    };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, error: 'The arguments must be a JSON object.' };
  }
  return { ok: true, args: { ...value } };
}
