import type { FakeReply } from './fake-slack.js';
import {
  historyReply,
  type KeptMessages,
  keepMessage,
  repliesReply,
  updateKeptMessage,
} from './fake-slack-kept.js';
import { isRecord, stringOr } from './json-value.js';

/** Counters one fake server uses to hand out unique ids. */
export interface SlackIds extends KeptMessages {
  /** The last message timestamp handed out, in microseconds. */
  ts: number;
  view: number;
  dm: Map<string, string>;
  /** Members of channels a test set (`FakeSlack.setMembers`); others have `DEFAULT_CHANNEL_MEMBERS`. */
  members: Map<string, readonly string[]>;
}

/** Who is in a channel unless a test says otherwise: the bot and the people the tests name most. */
export const DEFAULT_CHANNEL_MEMBERS: readonly string[] = ['UBOT', 'U1', 'U2', 'U3', 'U0STOPPER'];

export const FAKE_TEAM_ID = 'T1';
export const FAKE_BOT_USER_ID = 'UBOT';
export const FAKE_BOT_ID = 'BBOT';
export const FAKE_APP_ID = 'A1';

/** Message timestamps the fake assigns, as Slack does: the time of posting (`seconds.micros`), always increasing. */
function nextMessageTs(ids: SlackIds): string {
  ids.ts = Math.max(Date.now() * 1000, ids.ts + 1);
  return `${Math.floor(ids.ts / 1_000_000)}.${String(ids.ts % 1_000_000).padStart(6, '0')}`;
}

const ok = (fields: Record<string, unknown> = {}): FakeReply => ({ body: { ok: true, ...fields } });
const error = (code: string): FakeReply => ({ body: { ok: false, error: code } });

/** What `agents.sessions.setStatus` accepts (docs.slack.dev/reference/methods/agents.sessions.setStatus). */
export const SESSION_STATUSES = ['processing', 'active', 'suspended', 'closed'] as const;
const MAX_SESSION_TITLE = 200;

/**
 * `agents.sessions.setStatus` as Slack answers an app declared as an agent that subscribes to
 * `agent_session_stopped`: the channel and a known status are required, a title is at most 200 characters.
 * (An app that is not an agent gets `not_authorized`: tests script that with `setResponse`.)
 */
function sessionStatusReply(params: Record<string, unknown>): FakeReply {
  const status = stringOr(params.status);
  if (!stringOr(params.channel_id)) return error('channel_not_found');
  if (!status || !(SESSION_STATUSES as readonly string[]).includes(status)) return error('invalid_arguments');
  const title = stringOr(params.title);
  if (title !== undefined && title.length > MAX_SESSION_TITLE) return error('invalid_arguments');
  return ok();
}

function postedMessage(params: Record<string, unknown>, ts: string): Record<string, unknown> {
  const message: Record<string, unknown> = {
    type: 'message',
    user: FAKE_BOT_USER_ID,
    bot_id: FAKE_BOT_ID,
    app_id: FAKE_APP_ID,
    team: FAKE_TEAM_ID,
    text: stringOr(params.text) ?? stringOr(params.markdown_text) ?? '',
    ts,
  };
  const threadTs = stringOr(params.thread_ts);
  if (threadTs !== undefined) message.thread_ts = threadTs;
  if (params.blocks !== undefined) message.blocks = params.blocks;
  if (params.metadata !== undefined) message.metadata = params.metadata;
  return message;
}

function viewReply(params: Record<string, unknown>, ids: SlackIds): FakeReply {
  const view = isRecord(params.view) ? params.view : {};
  ids.view += 1;
  const id = stringOr(params.view_id) ?? `V${String(ids.view).padStart(9, '0')}`;
  return ok({
    view: {
      id,
      team_id: FAKE_TEAM_ID,
      type: 'modal',
      blocks: [],
      private_metadata: '',
      callback_id: '',
      state: { values: {} },
      hash: `hash-${ids.view}`,
      app_id: FAKE_APP_ID,
      bot_id: FAKE_BOT_ID,
      ...view,
    },
  });
}

function dmChannel(params: Record<string, unknown>, ids: SlackIds): string {
  const users = stringOr(params.users) ?? stringOr(params.channel) ?? 'unknown';
  let id = ids.dm.get(users);
  if (id === undefined) {
    id = `D${String(ids.dm.size + 1).padStart(9, '0')}`;
    ids.dm.set(users, id);
  }
  return id;
}

/** Slack's default page size of `conversations.members`, and its largest. */
const MEMBERS_PAGE = { default: 100, max: 1000 };

/**
 * `conversations.members` as Slack answers it: a page of member ids and `response_metadata.next_cursor` (an
 * opaque base64 string naming where the next page starts; empty on the last page). A DM is answered only with
 * `im:read`, which the bot does not have; a cursor Slack did not hand out is `invalid_cursor`.
 */
function membersReply(params: Record<string, unknown>, ids: SlackIds): FakeReply {
  const channel = stringOr(params.channel);
  if (!channel) return error('channel_not_found');
  if (channel.startsWith('D')) return error('missing_scope');
  const members = ids.members.get(channel) ?? DEFAULT_CHANNEL_MEMBERS;
  const limit = Math.min(
    Number(params.limit ?? MEMBERS_PAGE.default) || MEMBERS_PAGE.default,
    MEMBERS_PAGE.max,
  );
  const cursor = stringOr(params.cursor);
  let start = 0;
  if (cursor) {
    const from = /^user:(.+)$/.exec(Buffer.from(cursor, 'base64').toString('utf8'))?.[1];
    start = from === undefined ? -1 : members.indexOf(from);
    if (start < 0) return error('invalid_cursor');
  }
  const next = members[start + limit];
  return ok({
    members: members.slice(start, start + limit),
    response_metadata: { next_cursor: next ? Buffer.from(`user:${next}`).toString('base64') : '' },
  });
}

const TASK_STATUSES = ['pending', 'in_progress', 'complete', 'error'];
const MAX_CHUNK_FIELD = 256;

/**
 * What Slack refuses in a stream call: neither `markdown_text` nor `chunks` where one is required, a malformed
 * chunk (a `task_update` needs an id, a title and a known status; its fields are at most 256 characters), an
 * unknown `session_status` on `chat.stopStream`.
 */
function streamProblem(params: Record<string, unknown>, textRequired: boolean): FakeReply | undefined {
  const chunks = params.chunks;
  if (textRequired && params.markdown_text === undefined && chunks === undefined)
    return error('invalid_arguments');
  if (chunks !== undefined) {
    if (!Array.isArray(chunks) || chunks.length === 0) return error('invalid_chunks');
    for (const chunk of chunks) {
      if (!isRecord(chunk)) return error('invalid_chunks');
      if (chunk.type === 'markdown_text' && typeof chunk.text === 'string') continue;
      if (chunk.type !== 'task_update') return error('invalid_chunks');
      const fields = [chunk.id, chunk.title, chunk.details, chunk.output].filter((f) => f !== undefined);
      if (typeof chunk.id !== 'string' || typeof chunk.title !== 'string') return error('invalid_chunks');
      if (!TASK_STATUSES.includes(String(chunk.status))) return error('invalid_chunks');
      if (fields.some((f) => typeof f !== 'string' || f.length > MAX_CHUNK_FIELD))
        return error('invalid_chunks');
    }
  }
  const session = params.session_status;
  if (session !== undefined && !(SESSION_STATUSES as readonly unknown[]).includes(session))
    return error('invalid_arguments');
  return undefined;
}

/** What real Slack answers (trimmed to the fields this bot reads) when a test has not scripted the method. */
export function defaultSlackReply(method: string, params: Record<string, unknown>, ids: SlackIds): FakeReply {
  const channel = stringOr(params.channel);
  switch (method) {
    case 'auth.test':
      return ok({
        url: 'https://test.slack.com/',
        team: 'Test',
        user: 'agent',
        team_id: FAKE_TEAM_ID,
        user_id: FAKE_BOT_USER_ID,
        bot_id: FAKE_BOT_ID,
        is_enterprise_install: false,
      });
    case 'chat.postMessage': {
      const ts = nextMessageTs(ids);
      const message = postedMessage(params, ts);
      keepMessage(ids, channel, message);
      return ok({ channel, ts, message });
    }
    case 'chat.update': {
      updateKeptMessage(ids, channel, params);
      const ts = stringOr(params.ts);
      return ok({ channel, ts, text: stringOr(params.text) ?? '', message: postedMessage(params, ts ?? '') });
    }
    case 'chat.postEphemeral':
      return ok({ message_ts: nextMessageTs(ids) });
    case 'chat.startStream':
      return streamProblem(params, true) ?? ok({ channel, ts: nextMessageTs(ids) });
    case 'chat.appendStream':
      return streamProblem(params, true) ?? ok({ channel, ts: stringOr(params.ts) });
    case 'chat.stopStream': {
      const problem = streamProblem(params, false);
      if (problem) return problem;
      const ts = stringOr(params.ts) ?? '';
      return ok({ channel, ts, message: postedMessage(params, ts) });
    }
    case 'views.open':
    case 'views.update':
    case 'views.publish':
    case 'views.push':
      return viewReply(params, ids);
    case 'users.info': {
      const id = stringOr(params.user) ?? 'U0';
      return ok({
        user: {
          id,
          team_id: FAKE_TEAM_ID,
          name: `user-${id.toLowerCase()}`,
          is_admin: false,
          is_owner: false,
        },
      });
    }
    case 'conversations.replies':
      return repliesReply(params, ids);
    case 'conversations.history':
      return historyReply(params, ids);
    case 'conversations.members':
      return membersReply(params, ids);
    case 'conversations.open':
      return ok({ channel: { id: dmChannel(params, ids) } });
    case 'usergroups.users.list':
      return ok({ users: [] });
    case 'agents.sessions.setStatus':
      return sessionStatusReply(params);
    case 'agents.sessions.rename': {
      const title = stringOr(params.title) ?? '';
      if (!stringOr(params.channel_id)) return error('channel_not_found');
      if (title.length === 0 || title.length > MAX_SESSION_TITLE) return error('invalid_arguments');
      return ok();
    }
    case 'reactions.add':
    case 'reactions.remove':
    case 'assistant.threads.setStatus':
    case 'assistant.threads.setSuggestedPrompts':
    case 'assistant.threads.setTitle':
    case 'response_url': // POSTs to FakeSlack.responseUrl(); Slack answers these with a bare `ok`
      return ok();
    default:
      return { body: { ok: false, error: 'unknown_method' } };
  }
}
