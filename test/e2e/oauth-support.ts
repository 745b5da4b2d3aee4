import { expect } from 'vitest';
import type { Stores } from '../../src/db/stores.js';
import type { SlackCall } from '../support/fake-slack.js';
import { enableInstalls } from '../support/oauth-installs.js';
import { appMentionEvent, eventEnvelope, nextTs, postEvent } from '../support/slack-requests.js';
import { type Harness, SECRET } from './harness.js';

/** Lets the fake Slack's authorize page send installers back to this bot; resolves with the bot's origin. */
export function enableOAuth(h: Harness): string {
  const base = new URL(h.url).origin;
  enableInstalls(h.slack, base);
  return base;
}

/** Where Slack's events go: a harness, or `{ url }` of a bot process's `/slack/events`. */
type EventsUrl = Pick<Harness, 'url'>;

/** Sends an event of `teamId`'s workspace. */
export async function sendTeamEvent(
  h: EventsUrl,
  teamId: string,
  event: Record<string, unknown> & { type: string },
): Promise<void> {
  const response = await postEvent(h.url, SECRET, eventEnvelope(event, { teamId }));
  expect(response.status).toBe(200);
}

/** Mentions the bot in `C<team>` as `U<team>`; resolves with the message's ts. */
export async function mentionIn(h: EventsUrl, teamId: string, text: string): Promise<string> {
  const ts = nextTs();
  await sendTeamEvent(
    h,
    teamId,
    appMentionEvent({ user: `U${teamId}`, channel: `C${teamId}`, text: `<@UBOT> ${text}`, ts, team: teamId }),
  );
  return ts;
}

/**
 * Mentions the bot in `C<team>` as `W<team>`, in a workspace of Enterprise Grid organisation `E1`, as Slack sends
 * it for the organisation's install (`orgWide`) or for the workspace's own.
 */
export async function mentionInOrganisation(h: EventsUrl, teamId: string, orgWide = true): Promise<void> {
  const event = appMentionEvent({
    user: `W${teamId}`,
    channel: `C${teamId}`,
    text: '<@UBOT> note it',
    ts: nextTs(),
    team: teamId,
  });
  const envelope = eventEnvelope(event, { teamId, enterpriseId: 'E1', enterpriseInstall: orgWide });
  expect((await postEvent(h.url, SECRET, envelope)).status).toBe(200);
}

/** The workspace whose token a call carried, and the method: what a test compares to the team expected. */
export function tokenTeams(h: Harness, calls: readonly SlackCall[]): [string, string | undefined][] {
  return calls.map((call) => [call.method, h.slack.oauth.teamOf(call.token)]);
}

/**
 * The stores with the installations' read failing once, as a lost database connection fails it, each time
 * `refusal.next` is set: for `BotOverrides.stores`.
 */
export function installationsRefusedOnce(refusal: { next: boolean }): (stores: Stores) => Stores {
  return (stores) => ({
    ...stores,
    installations: {
      ...stores.installations,
      find: (id) => {
        if (!refusal.next) return stores.installations.find(id);
        refusal.next = false;
        return Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
      },
    },
  });
}
