import { z } from 'zod';
import type { Clock } from '../clock.js';
import type { ChannelMembership } from '../conversations/surface-ports.js';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { SlackClients } from './installations/team-clients.js';

const pageSchema = z.object({
  members: z.array(z.string()).default([]),
  response_metadata: z.object({ next_cursor: z.string().optional() }).optional(),
});

/** Membership changes rarely and stops are rare: a minute keeps a burst of stops to one lookup per channel. */
export const CHANNEL_CACHE_MS = 60_000;
/** Channels whose members are kept at once; past it the oldest answer goes. */
export const MAX_CACHED_CHANNELS = 500;
/** Members per page: Slack recommends no more than 200. */
const PAGE_SIZE = 200;
/** Pages read at most (10,000 members); a member beyond them is not found, and the log says so. */
const MAX_PAGES = 50;

export interface ChannelMembershipOptions {
  ttlMs?: number;
  maxChannels?: number;
}

/**
 * Channel members through `conversations.members` (scopes `channels:read`, `groups:read`, `mpim:read`), every
 * page read, kept per channel for `ttlMs` in a cache of at most `maxChannels` channels; lookups of a channel
 * already under way are shared. A failed lookup (a missing scope, a channel the bot left) is not cached and
 * answers false: nobody is let through on an answer Slack did not give.
 */
export function createChannelMembership(
  clients: SlackClients,
  clock: Clock,
  logger: Logger,
  options: ChannelMembershipOptions = {},
): ChannelMembership {
  const ttlMs = options.ttlMs ?? CHANNEL_CACHE_MS;
  const maxChannels = options.maxChannels ?? MAX_CACHED_CHANNELS;
  const cache = new Map<string, { members: ReadonlySet<string>; until: number }>();
  const reading = new Map<string, Promise<ReadonlySet<string> | undefined>>();

  const remember = (key: string, members: ReadonlySet<string>) => {
    const now = clock.now();
    cache.delete(key);
    if (cache.size >= maxChannels)
      for (const [other, entry] of cache) if (entry.until <= now) cache.delete(other);
    // Still full: forget the oldest (a Map keeps insertion order).
    while (cache.size >= maxChannels) {
      const oldest = cache.keys().next().value;
      if (oldest === undefined) break;
      cache.delete(oldest);
    }
    cache.set(key, { members, until: now + ttlMs });
  };

  const read = async (teamId: string, channelId: string): Promise<ReadonlySet<string> | undefined> => {
    const client = clients.forTeam(teamId);
    const members = new Set<string>();
    let cursor: string | undefined;
    try {
      for (let page = 0; page < MAX_PAGES; page += 1) {
        const reply = pageSchema.parse(
          await client.conversations.members({
            channel: channelId,
            limit: PAGE_SIZE,
            ...(cursor ? { cursor } : {}),
          }),
        );
        for (const member of reply.members) members.add(member);
        cursor = reply.response_metadata?.next_cursor || undefined;
        if (!cursor) return members;
      }
      logger.warn('channel has more members than are read; the rest are not found', {
        channelId,
        read: members.size,
      });
      return members;
    } catch (error) {
      logger.warn('channel members lookup failed', { channelId, error: describeError(error) });
      return undefined;
    }
  };

  const membersOf = (teamId: string, channelId: string): Promise<ReadonlySet<string> | undefined> => {
    const key = `${teamId}:${channelId}`;
    const cached = cache.get(key);
    if (cached && cached.until > clock.now()) return Promise.resolve(cached.members);
    const pending = reading.get(key);
    if (pending) return pending;
    const lookup = read(teamId, channelId).then((members) => {
      if (members) remember(key, members);
      return members;
    });
    reading.set(key, lookup);
    void lookup.finally(() => reading.delete(key));
    return lookup;
  };

  return {
    async isMember({ teamId, channelId, userId }) {
      const members = await membersOf(teamId, channelId);
      return members?.has(userId) ?? false;
    },
  };
}
