import type { AnyMiddlewareArgs, Middleware } from '@slack/bolt';
import { z } from 'zod';
import type { Logger } from '../logger.js';

/**
 * Slack's ids as Slack sends them. A signed request can still carry any JSON, so every id the listeners use
 * (who clicked, in which workspace and channel) is checked here, before any listener runs: an id such as
 * `U2><!channel` is never echoed into a card, an array never reaches a query, and a team such as `local` (the
 * terminal chat's) never lets a Slack request decide a request of another surface.
 */
const USER = z.string().regex(/^[UW][A-Z0-9]{1,30}$/);
const TEAM = z.string().regex(/^[TE][A-Z0-9]{1,30}$/);
const ENTERPRISE = z.string().regex(/^E[A-Z0-9]{1,30}$/);
const CHANNEL = z.string().regex(/^[CDG][A-Z0-9]{1,30}$/);
const TS = z.string().regex(/^\d{1,12}\.\d{1,9}$/);

const interaction = z.object({
  user: z.object({ id: USER, team_id: TEAM.nullish() }),
  team: z.object({ id: TEAM, enterprise_id: ENTERPRISE.nullish() }).nullish(),
  enterprise: z.object({ id: ENTERPRISE }).nullish(),
  channel: z.object({ id: CHANNEL }).nullish(),
  container: z
    .object({ channel_id: CHANNEL.optional(), message_ts: TS.optional(), thread_ts: TS.optional() })
    .nullish(),
  message: z.object({ ts: TS.optional(), thread_ts: TS.optional() }).nullish(),
});

const command = z.object({ user_id: USER, team_id: TEAM, channel_id: CHANNEL });

const envelope = z.object({ team_id: TEAM });

/** App Home is published for the event's user: checked as a click's user is. */
const homeOpened = z.object({ event: z.object({ type: z.literal('app_home_opened'), user: USER }) });

/** Why a request's ids are refused; undefined when they are all well formed. */
export function malformedIdsIn(body: unknown): string | undefined {
  if (body === null || typeof body !== 'object') return 'not an object';
  const type = 'type' in body ? body.type : undefined;
  if ('command' in body) return problemOf(command.safeParse(body));
  if (type === 'block_actions' || type === 'view_submission' || type === 'view_closed') {
    const parsed = interaction.safeParse(body);
    if (!parsed.success) return problemOf(parsed);
    // The workspace comes from `team`, else the user's own: one of them must be there.
    return parsed.data.team?.id || parsed.data.user.team_id ? undefined : 'no team';
  }
  if (type === 'event_callback') {
    const parsed = envelope.safeParse(body);
    if (!parsed.success) return problemOf(parsed);
    const event = 'event' in body ? body.event : undefined;
    const isHome =
      event !== null && typeof event === 'object' && 'type' in event && event.type === 'app_home_opened';
    return isHome ? problemOf(homeOpened.safeParse(body)) : undefined;
  }
  return undefined;
}

function problemOf(parsed: { success: boolean; error?: z.ZodError }): string | undefined {
  if (parsed.success) return undefined;
  return parsed.error?.issues.map((issue) => issue.path.join('.') || 'body').join(', ');
}

/**
 * Global middleware: a request whose ids are malformed (or of a workspace Slack never names, such as the
 * terminal's `local`) is acknowledged, so Slack does not retry it, and goes no further.
 */
export function rejectMalformedIds(logger: Logger): Middleware<AnyMiddlewareArgs> {
  return async (args) => {
    const problem = malformedIdsIn(args.body);
    if (problem === undefined) {
      await args.next();
      return;
    }
    logger.warn('request refused: malformed ids', { problem });
    if ('ack' in args && typeof args.ack === 'function') await (args.ack as () => Promise<void>)();
  };
}
