import { createHmac, randomBytes, randomInt } from 'node:crypto';

/** The form content type Bolt's receiver requires byte for byte (it compares with `===`; `; charset` breaks it). */
export const FORM_CONTENT_TYPE = 'application/x-www-form-urlencoded';

let tsSeconds = Math.floor(Date.now() / 1000);
let tsMicros = randomInt(0, 500_000);

/**
 * A unique, increasing Slack message timestamp (`"1700000000.000100"` format) for incoming test messages.
 * The microsecond part starts at a random offset, so two test processes rarely produce the same value.
 */
export function nextTs(): string {
  tsMicros += 1;
  if (tsMicros >= 1_000_000) {
    tsSeconds += 1;
    tsMicros = 0;
  }
  return `${tsSeconds}.${String(tsMicros).padStart(6, '0')}`;
}

/** Slack's request signature: `v0=` + hex HMAC-SHA256 of `v0:${timestamp}:${rawBody}` with the signing secret. */
export function slackSignature(secret: string, timestamp: number, rawBody: string): string {
  return `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${rawBody}`).digest('hex')}`;
}

export interface SignedPostOptions {
  body: string;
  contentType: string;
  /** Unix seconds; default now. Bolt rejects anything older than 5 minutes. */
  timestamp?: number;
  /** Extra headers, e.g. `x-slack-retry-num`. They may override the signature headers. */
  headers?: Record<string, string>;
}

/** POSTs `body` signed exactly as Slack signs its requests. */
export function signedPost(url: string, secret: string, options: SignedPostOptions): Promise<Response> {
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': options.contentType,
      'x-slack-request-timestamp': String(timestamp),
      'x-slack-signature': slackSignature(secret, timestamp, options.body),
      ...options.headers,
    },
    body: options.body,
  });
}

export type SlackEvent = Record<string, unknown> & { type: string };

export interface EventEnvelopeOptions {
  teamId?: string;
  eventId?: string;
  apiAppId?: string;
  botUserId?: string;
  /** Enterprise Grid: the organisation, and whether the app is installed org-wide. */
  enterpriseId?: string;
  enterpriseInstall?: boolean;
}

/** An Events API `event_callback` envelope around `event`. */
export function eventEnvelope(
  event: SlackEvent,
  options: EventEnvelopeOptions = {},
): Record<string, unknown> {
  const teamId = options.teamId ?? 'T1';
  return {
    token: 'legacy-verification-token',
    team_id: teamId,
    ...(options.enterpriseId ? { enterprise_id: options.enterpriseId } : {}),
    api_app_id: options.apiAppId ?? 'A1',
    event,
    type: 'event_callback',
    event_id: options.eventId ?? `Ev${randomBytes(5).toString('hex').toUpperCase()}`,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [
      {
        enterprise_id: options.enterpriseId ?? null,
        team_id: options.enterpriseInstall ? null : teamId,
        user_id: options.botUserId ?? 'UBOT',
        is_bot: true,
        is_enterprise_install: options.enterpriseInstall ?? false,
      },
    ],
    is_ext_shared_channel: false,
    event_context: `4-${randomBytes(8).toString('hex')}`,
  };
}

export interface AppMentionOptions {
  user: string;
  text: string;
  channel: string;
  /** Default `nextTs()`. */
  ts?: string;
  threadTs?: string;
  team?: string;
}

/** An `app_mention` event; `text` should contain the mention, e.g. `<@UBOT> hello`. */
export function appMentionEvent(options: AppMentionOptions): SlackEvent {
  const ts = options.ts ?? nextTs();
  return {
    type: 'app_mention',
    user: options.user,
    text: options.text,
    ts,
    team: options.team ?? 'T1',
    channel: options.channel,
    event_ts: ts,
    ...(options.threadTs === undefined ? {} : { thread_ts: options.threadTs }),
  };
}

export interface MessageEventOptions extends AppMentionOptions {
  channelType?: 'channel' | 'group' | 'im' | 'mpim';
  subtype?: string;
  botId?: string;
}

/** A `message` event (channel message, thread reply, or DM with `channelType: 'im'`). */
export function messageEvent(options: MessageEventOptions): SlackEvent {
  const ts = options.ts ?? nextTs();
  return {
    type: 'message',
    channel: options.channel,
    user: options.user,
    text: options.text,
    ts,
    team: options.team ?? 'T1',
    event_ts: ts,
    channel_type: options.channelType ?? 'channel',
    ...(options.threadTs === undefined ? {} : { thread_ts: options.threadTs }),
    ...(options.subtype === undefined ? {} : { subtype: options.subtype }),
    ...(options.botId === undefined ? {} : { bot_id: options.botId }),
  };
}

/** POSTs an Events API envelope as signed JSON. */
export function postEvent(
  url: string,
  secret: string,
  envelope: Record<string, unknown>,
  extraHeaders: Record<string, string> = {},
): Promise<Response> {
  return signedPost(url, secret, {
    body: JSON.stringify(envelope),
    contentType: 'application/json',
    headers: extraHeaders,
  });
}

/** POSTs an interactivity payload (block_actions, view_submission) as Slack does: form field `payload=<json>`. */
export function postInteraction(
  url: string,
  secret: string,
  payload: Record<string, unknown>,
): Promise<Response> {
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  return signedPost(url, secret, { body, contentType: FORM_CONTENT_TYPE });
}

export interface SlashCommandOptions {
  command: string;
  text: string;
  userId: string;
  teamId?: string;
  channelId: string;
  /** Default: an unusable URL. Use `FakeSlack.responseUrl()` to record what the app sends there. */
  responseUrl?: string;
}

/** The flat form fields of a slash command request (no `payload=` wrapper). */
export function slashCommandBody(options: SlashCommandOptions): Record<string, string> {
  const teamId = options.teamId ?? 'T1';
  return {
    token: 'legacy-verification-token',
    team_id: teamId,
    team_domain: 'test',
    channel_id: options.channelId,
    channel_name: 'general',
    user_id: options.userId,
    user_name: `user-${options.userId.toLowerCase()}`,
    command: options.command,
    text: options.text,
    api_app_id: 'A1',
    is_enterprise_install: 'false',
    response_url:
      options.responseUrl ?? `http://127.0.0.1:9/commands/${teamId}/${randomBytes(4).toString('hex')}`,
    trigger_id: `${randomInt(1000, 9999)}.${randomInt(1000, 9999)}.${randomBytes(8).toString('hex')}`,
  };
}

/** POSTs slash command fields form-encoded and signed. */
export function postSlashCommand(
  url: string,
  secret: string,
  fields: Record<string, string>,
): Promise<Response> {
  return signedPost(url, secret, {
    body: new URLSearchParams(fields).toString(),
    contentType: FORM_CONTENT_TYPE,
  });
}

export {
  type BlockActionsOptions,
  blockActionsPayload,
  type ViewSubmissionOptions,
  viewSubmissionPayload,
} from './slack-payloads.js';
