import type { ThreadRef } from '../conversations/surface-ports.js';
import { readOptionalString, readString } from './sql/columns.js';

/** A conversation row's thread: its team (and Enterprise Grid organisation, when stored), channel and ts. */
export function threadOf(row: Record<string, unknown>): ThreadRef {
  const enterpriseId = readOptionalString(row, 'enterprise_id');
  return {
    teamId: readString(row, 'team_id'),
    ...(enterpriseId ? { enterpriseId } : {}),
    channelId: readString(row, 'channel_id'),
    threadTs: readString(row, 'thread_ts'),
  };
}
