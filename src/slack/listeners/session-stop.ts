import type { App } from '@slack/bolt';
import { z } from 'zod';
import type { RunWork } from '../../conversations/run-work.js';
import type { StopRequest } from '../../conversations/surface-ports.js';
import type { Logger } from '../../logger.js';

const SLACK_TS = /^\d{1,12}\.\d{1,9}$/;

/** The fields of `agent_session_stopped` the bot acts on (the team comes from the envelope). */
const stopSchema = z.object({
  teamId: z.string().regex(/^[TE][A-Z0-9]{1,30}$/),
  channelId: z.string().regex(/^[CDG][A-Z0-9]{1,30}$/),
  threadTs: z.string().regex(SLACK_TS),
  userId: z.string().regex(/^[UW][A-Z0-9]{1,30}$/),
});

/** Validates a stop event's fields (a signed request can still carry any JSON); undefined when malformed. */
function parseStopRequest(
  raw: Record<Exclude<keyof StopRequest, 'enterpriseId'>, unknown>,
): StopRequest | undefined {
  const parsed = stopSchema.safeParse(raw);
  return parsed.success ? parsed.data : undefined;
}

export interface SessionStopListenerDeps {
  /** Where the stop is recorded and honoured (in this thread, or in the worker that drives the thread). */
  work: Pick<RunWork, 'stopRun'>;
  logger: Logger;
}

/**
 * Slack's stop button (`agent_session_stopped`): whoever clicked it, in whichever thread, asks to stop that
 * thread's work. The event is acknowledged at once; the request is handed to the core, which records it and
 * ends the run wherever it is driven. Slack does not change the session's status itself: the core does.
 */
export function registerSessionStopListener(app: App, deps: SessionStopListenerDeps): void {
  app.event('agent_session_stopped', async ({ event, body, context }) => {
    const stop = parseStopRequest({
      teamId: context.teamId ?? body.team_id,
      channelId: event.channel,
      threadTs: event.thread_ts,
      userId: event.user,
    });
    if (!stop) {
      deps.logger.warn('ignored an agent_session_stopped event with missing or malformed fields', {
        eventId: body.event_id,
      });
      return;
    }
    deps.work.stopRun(stop);
  });
}
