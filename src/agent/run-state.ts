import { z } from 'zod';
import { toolCallSchema } from './history.js';

/** The version every writer writes. Bump it with a new schema below and a frozen fixture in test/fixtures. */
export const CURRENT_RUN_STATE_VERSION = 1;

const usageSchema = z.object({
  promptTokens: z.number().int().min(0),
  completionTokens: z.number().int().min(0),
  totalTokens: z.number().int().min(0),
});

const runStateV1 = z.object({
  schemaVersion: z.literal(1),
  /** Model calls made by this run so far, across every pause and resume. */
  turn: z.number().int().min(0),
  /** How many times this run has paused for approvals. */
  approvalRounds: z.number().int().min(0),
  /** The turn whose tool calls wait for decisions; null when the run is not paused mid-turn. */
  pausedTurn: z
    .object({
      turn: z.number().int().min(1),
      calls: z.array(toolCallSchema.extend({ done: z.boolean() })),
    })
    .nullable(),
  /** "Approve always" / "reject always" decisions per tool for this run. */
  stickyDecisions: z.record(z.string(), z.enum(['approve', 'reject'])),
  usage: usageSchema,
});

export type RunState = z.infer<typeof runStateV1>;
export type Usage = z.infer<typeof usageSchema>;

/** Every version this code can read, by number. */
const readers: Record<number, z.ZodType<RunState>> = { 1: runStateV1 };

export function initialRunState(): RunState {
  return {
    schemaVersion: CURRENT_RUN_STATE_VERSION,
    turn: 0,
    approvalRounds: 0,
    pausedTurn: null,
    stickyDecisions: {},
    usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
  };
}

export function serializeRunState(state: RunState): string {
  return JSON.stringify(runStateV1.parse(state));
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
