import { z } from 'zod';
import type { DecisionPosition } from '../approvals/audit-queries.js';

/**
 * Where a list of requests goes on (`cursor` of the approvals API and the decide page): past the request `id`
 * at time `at` (its creation in the pending list, its decision in the decided list), in the list's order. Given
 * out opaque (base64url of JSON), so that clients pass back what they were given and nothing else.
 */
export type ListPosition = DecisionPosition;

const positionSchema = z.tuple([z.number().finite().nonnegative(), z.string().min(1).max(200)]);

export function encodeCursor(position: ListPosition): string {
  return Buffer.from(JSON.stringify([position.at, position.id])).toString('base64url');
}

/**
 * The position a cursor holds: none when absent (the list's start), `invalid` for anything this console did not
 * give out.
 */
export function decodeCursor(cursor: string | undefined): ListPosition | undefined | 'invalid' {
  if (cursor === undefined || cursor === '') return undefined;
  if (cursor.length > 400 || !/^[A-Za-z0-9_-]+$/.test(cursor)) return 'invalid';
  try {
    const parsed = positionSchema.safeParse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
    return parsed.success ? { at: parsed.data[0], id: parsed.data[1] } : 'invalid';
  } catch {
    // Not JSON: not a cursor this console gave out.
    return 'invalid';
  }
}

/**
 * The index in `items` (ordered by creation time, then id, as the database sorts them) of the first item past
 * `after`: the one after it, or when it left the list meanwhile, the first one created after it.
 */
export function startAfter(
  items: readonly { createdAt: number; id: string }[],
  after: ListPosition | undefined,
): number {
  if (!after) return 0;
  const same = items.findIndex((item) => item.id === after.id);
  if (same !== -1) return same + 1;
  const index = items.findIndex(
    (item) => item.createdAt > after.at || (item.createdAt === after.at && item.id > after.id),
  );
  return index === -1 ? items.length : index;
}

/** The message of a refused cursor, for the API and the decide page alike. */
export const BAD_CURSOR = 'cursor must be a nextCursor this API gave out (or absent, for the first page).';
