import { randomBytes, randomInt } from 'node:crypto';

function triggerId(): string {
  return `${randomInt(1000, 9999)}.${randomInt(1000, 9999)}.${randomBytes(8).toString('hex')}`;
}

function nowTs(): string {
  return (Date.now() / 1000).toFixed(6);
}

/** A `response_url` that goes nowhere useful (port 9 is a "bad port" for fetch, so it fails fast, never hangs). */
function deadResponseUrl(teamId: string): string {
  return `http://127.0.0.1:9/actions/${teamId}/${randomBytes(4).toString('hex')}`;
}

export interface BlockActionsOptions {
  userId: string;
  teamId?: string;
  channelId: string;
  messageTs: string;
  threadTs?: string;
  actionId: string;
  value: string;
  blockId?: string;
  triggerId?: string;
  /** Default: an unusable URL. Use `FakeSlack.responseUrl()` to record what the app sends there. */
  responseUrl?: string;
  /** Button label, default `Approve`. */
  buttonText?: string;
  /** Enterprise Grid: the clicker's organisation (in `team` and `enterprise`), and whether its install is org-wide. */
  enterpriseId?: string;
  enterpriseInstall?: boolean;
}

/** A `block_actions` payload for a button click on a message, shaped like the one Slack sends. */
export function blockActionsPayload(options: BlockActionsOptions): Record<string, unknown> {
  const teamId = options.teamId ?? 'T1';
  const threadTs = options.threadTs ?? options.messageTs;
  const blockId = options.blockId ?? `b-${randomBytes(3).toString('hex')}`;
  return {
    type: 'block_actions',
    user: { id: options.userId, username: `user-${options.userId.toLowerCase()}`, team_id: teamId },
    api_app_id: 'A1',
    token: 'legacy-verification-token',
    container: {
      type: 'message',
      message_ts: options.messageTs,
      channel_id: options.channelId,
      is_ephemeral: false,
      thread_ts: threadTs,
    },
    trigger_id: options.triggerId ?? triggerId(),
    team: {
      id: teamId,
      domain: 'test',
      ...(options.enterpriseId ? { enterprise_id: options.enterpriseId, enterprise_name: 'Org' } : {}),
    },
    enterprise: options.enterpriseId ? { id: options.enterpriseId, name: 'Org' } : null,
    is_enterprise_install: options.enterpriseInstall ?? false,
    channel: { id: options.channelId, name: 'general' },
    message: {
      type: 'message',
      user: 'UBOT',
      bot_id: 'BBOT',
      ts: options.messageTs,
      thread_ts: threadTs,
      text: 'Approval needed',
      blocks: [],
    },
    state: { values: {} },
    response_url: options.responseUrl ?? deadResponseUrl(teamId),
    actions: [
      {
        type: 'button',
        action_id: options.actionId,
        block_id: blockId,
        value: options.value,
        text: { type: 'plain_text', text: options.buttonText ?? 'Approve', emoji: true },
        action_ts: nowTs(),
      },
    ],
  };
}

export interface ViewSubmissionOptions {
  userId: string;
  teamId?: string;
  callbackId: string;
  privateMetadata: string;
  /** `state.values`: block_id → action_id → element state, e.g. `{ reason: { input: { type: 'plain_text_input', value: 'no' } } }`. */
  values: Record<string, Record<string, unknown>>;
  viewId?: string;
}

/** A `view_submission` payload (a modal's Submit), shaped like the one Slack sends. */
export function viewSubmissionPayload(options: ViewSubmissionOptions): Record<string, unknown> {
  const teamId = options.teamId ?? 'T1';
  return {
    type: 'view_submission',
    team: { id: teamId, domain: 'test' },
    user: {
      id: options.userId,
      username: `user-${options.userId.toLowerCase()}`,
      name: `user-${options.userId.toLowerCase()}`,
      team_id: teamId,
    },
    api_app_id: 'A1',
    token: 'legacy-verification-token',
    trigger_id: triggerId(),
    view: {
      id: options.viewId ?? `V${randomBytes(5).toString('hex').toUpperCase()}`,
      team_id: teamId,
      type: 'modal',
      blocks: [],
      private_metadata: options.privateMetadata,
      callback_id: options.callbackId,
      state: { values: options.values },
      hash: `${Math.floor(Date.now() / 1000)}.${randomBytes(4).toString('hex')}`,
      title: { type: 'plain_text', text: 'Agent', emoji: true },
      clear_on_close: false,
      notify_on_close: false,
      close: null,
      submit: { type: 'plain_text', text: 'Submit', emoji: true },
      previous_view_id: null,
      root_view_id: null,
      app_id: 'A1',
      external_id: '',
      app_installed_team_id: teamId,
      bot_id: 'BBOT',
    },
    response_urls: [],
    is_enterprise_install: false,
    enterprise: null,
  };
}
