import type { ThreadRef } from '../conversations/surface-ports.js';
import { readOptionalString, readString } from './sql/columns.js';

/** A conversation or approval row's Enterprise Grid organisation, as an optional field: none outside Grid. */
export function enterpriseOf(row: Record<string, unknown>): { enterpriseId?: string } {
  const enterpriseId = readOptionalString(row, 'enterprise_id');
  return enterpriseId === null ? {} : { enterpriseId };
}

/** A conversation row's thread: its team (and Enterprise Grid organisation, when stored), channel and ts. */
export function threadOf(row: Record<string, unknown>): ThreadRef {
  return {
    teamId: readString(row, 'team_id'),
    ...enterpriseOf(row),
    channelId: readString(row, 'channel_id'),
    threadTs: readString(row, 'thread_ts'),
  };
}
