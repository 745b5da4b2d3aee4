import { z } from 'zod';
import { historyItemSchema, toolCallSchema } from './history.js';

/** The version every writer writes. Bump it with a new schema below and a frozen fixture in test/fixtures. */
export const CURRENT_RUN_STATE_VERSION = 2;

const usageSchema = z.object({
  promptTokens: z.number().int().min(0),
  completionTokens: z.number().int().min(0),
  totalTokens: z.number().int().min(0),
});

/** A model turn whose tool calls wait for their outputs (decisions, or a nested agent's answer). */
const pausedTurnSchema = z.object({
  turn: z.number().int().min(1),
  calls: z.array(toolCallSchema.extend({ done: z.boolean() })),
});

const runStateV1 = z.object({
  schemaVersion: z.literal(1),
  /** Model calls made by this run so far, across every pause and resume. */
  turn: z.number().int().min(0),
  /** How many times this run has paused for approvals. */
  approvalRounds: z.number().int().min(0),
  /** The turn whose tool calls wait for decisions; null when the run is not paused mid-turn. */
  pausedTurn: pausedTurnSchema.nullable(),
  /** "Approve always" / "reject always" decisions per tool for this run. */
  stickyDecisions: z.record(z.string(), z.enum(['approve', 'reject'])),
  usage: usageSchema,
});

/**
 * An agent called as a tool, running its own loop inside the run: its conversation (the task it was given,
 * its model turns, its calls and their outputs) lives here, never in the thread's history.
 */
const agentFrameSchema = z.object({
  /** The agent's name in the agents file. */
  agent: z.string().min(1),
  /** The call of the agent below (the bot's own agent, or the frame beneath) that this frame answers. */
  callId: z.string(),
  /** Model calls this agent made in this frame (its own limit); the run's `turn` counts them too. */
  turns: z.number().int().min(0),
  /** Its conversation, each item with the run's turn that produced it. */
  items: z.array(z.object({ turn: z.number().int().min(0), item: historyItemSchema })),
  /** Its turn whose calls wait for their outputs; null between its model turns. */
  pausedTurn: pausedTurnSchema.nullable(),
});

const runStateV2 = runStateV1.extend({
  schemaVersion: z.literal(2),
  /**
   * Nested agents at work, outermost first: the last one is the agent the run is in. The bot's own agent
   * (top-level `pausedTurn`) waits for the first frame's answer, each frame for the one above it.
   */
  frames: z.array(agentFrameSchema),
});

export type RunState = z.infer<typeof runStateV2>;
export type AgentFrame = z.infer<typeof agentFrameSchema>;
export type PausedTurn = z.infer<typeof pausedTurnSchema>;
export type Usage = z.infer<typeof usageSchema>;

/** Every version this code can read, by number; an older one is brought up to the current shape. */
const readers: Record<number, z.ZodType<RunState>> = {
  1: runStateV1.transform((v1): RunState => ({ ...v1, schemaVersion: 2, frames: [] })),
  2: runStateV2,
};

export function initialRunState(): RunState {
  return {
    schemaVersion: CURRENT_RUN_STATE_VERSION,
    turn: 0,
    approvalRounds: 0,
    pausedTurn: null,
    stickyDecisions: {},
    usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
    frames: [],
  };
}

export function serializeRunState(state: RunState): string {
  return JSON.stringify(runStateV2.parse(state));
}

export type RunStateParse = { ok: true; state: RunState } | { ok: false; reason: string };

/** Reads a stored state; an unknown or future version, or a malformed one, is refused with a clear reason. */
export function parseRunState(json: string): RunStateParse {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return { ok: false, reason: 'Run state is not valid JSON.' };
  }
  const version = z.object({ schemaVersion: z.unknown() }).safeParse(value);
  const schemaVersion = version.success ? version.data.schemaVersion : undefined;
  const reader = typeof schemaVersion === 'number' ? readers[schemaVersion] : undefined;
  if (!reader)
    return { ok: false, reason: `Run state schema version ${String(schemaVersion)} is not supported.` };
  const parsed = reader.safeParse(value);
  if (!parsed.success) {
    const where = parsed.error.issues.map((issue) => issue.path.join('.') || '(root)').join(', ');
    return { ok: false, reason: `Run state (schema version ${schemaVersion}) is invalid at: ${where}.` };
  }
  return { ok: true, state: parsed.data };
}
