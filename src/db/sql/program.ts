import type { SQL } from 'drizzle-orm';
import type { AuditInput } from '../../audit/audit-event.js';
import { AppError } from '../../errors.js';

/** A row as both engines return it: column names (snake_case, as in the SQL) to values. */
export type Row = Record<string, unknown>;

/**
 * One step a store program asks its engine to take. Programs never touch a connection themselves, so the same
 * program runs synchronously inside a SQLite transaction and asynchronously inside a PostgreSQL one.
 */
export type Step =
  | { op: 'rows'; query: SQL }
  | { op: 'count'; query: SQL }
  /** Audit events to append when the transaction ends: always last, so the chain head is locked last. */
  | { op: 'audit'; events: readonly AuditInput[] };

/**
 * A store method's database work, written once as a generator: each `yield*` of `rows`, `count` or `audit` is
 * carried out by the engine, which resumes the program with the answer.
 *
 * @example
 * function* pendingOf(runId: string): Program<Row[]> {
 *   return yield* rows(sql`select * from approvals where run_id = ${runId} and status = 'pending'`);
 * }
 */
export type Program<T> = Generator<Step, T, unknown>;

/** The rows a query returns (a select, or a write with `returning`). */
export function* rows(query: SQL): Program<Row[]> {
  const answer: unknown = yield { op: 'rows', query };
  if (!Array.isArray(answer))
    throw new AppError('database.unexpected_answer', 'The database engine answered a query without rows');
  return answer.filter(isRow);
}

/** The first row a query returns, if any. */
export function* row(query: SQL): Program<Row | undefined> {
  return (yield* rows(query))[0];
}

/** How many rows a write changed. */
export function* count(query: SQL): Program<number> {
  const answer: unknown = yield { op: 'count', query };
  if (typeof answer !== 'number')
    throw new AppError('database.unexpected_answer', 'The database engine answered a write without a count');
  return answer;
}

/** Records audit events with the transaction's change; the engine chains them when the transaction ends. */
export function* audit(events: readonly AuditInput[]): Program<void> {
  if (events.length > 0) yield { op: 'audit', events };
}

function isRow(value: unknown): value is Row {
  return value !== null && typeof value === 'object';
}

/**
 * Passes `program`'s steps on to whoever runs the result, and their answers (or errors) back into it, so a wrapper
 * can watch the steps or hold some back: `pass` returns false for a step the wrapper keeps, and the program then
 * resumes at once without an answer. Returns what the program returns.
 */
export function* forwardSteps<T>(program: Program<T>, pass: (step: Step) => boolean): Program<T> {
  let next = program.next();
  while (!next.done) {
    const step = next.value;
    if (!pass(step)) {
      next = program.next();
      continue;
    }
    let answer: unknown;
    try {
      answer = yield step;
    } catch (error) {
      next = program.throw(error);
      continue;
    }
    next = program.next(answer);
  }
  return next.value;
}

/** Runs a program to its end, taking each step with `take` (a synchronous engine). */
export function driveSync<T>(program: Program<T>, take: (step: Step) => unknown): T {
  let next = program.next();
  while (!next.done) {
    let answer: unknown;
    try {
      answer = take(next.value);
    } catch (error) {
      next = program.throw(error);
      continue;
    }
    next = program.next(answer);
  }
  return next.value;
}

/** Runs a program to its end, taking each step with `take` (an asynchronous engine). */
export async function driveAsync<T>(program: Program<T>, take: (step: Step) => Promise<unknown>): Promise<T> {
  let next = program.next();
  while (!next.done) {
    let answer: unknown;
    try {
      answer = await take(next.value);
    } catch (error) {
      next = program.throw(error);
      continue;
    }
    next = program.next(answer);
  }
  return next.value;
}
