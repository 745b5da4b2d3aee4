import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { FakeReply } from './fake-slack.js';
import { stringOr } from './json-value.js';

/** The path of Slack's authorize page for installs (OAuth v2), beside the Web API. */
export const OAUTH_AUTHORIZE_PATH = '/oauth/v2/authorize';

/** The workspace (or organisation) the next visit of the authorize page installs the app in. */
export interface FakeWorkspace {
  teamId?: string;
  teamName?: string;
  enterpriseId?: string;
  /** Who installs it. */
  userId?: string;
  /** An org-wide install: the workspaces of the organisation it was granted to (`auth.teams.list`). */
  teams?: readonly string[];
}

/**
 * Installs as the fake Slack serves them: once `enable`d, the authorize page hands out codes, `oauth.v2.access`
 * turns each into a bot token of its own per workspace, `auth.test` answers per token, and every other call
 * whose token was never issued (`invalid_auth`) or was revoked (`token_revoked`) is refused as Slack does.
 */
export interface FakeSlackOAuth {
  enable(app: { clientId: string; clientSecret: string; redirectUrl: string }): void;
  /** Who the next authorize visit installs; `deny` makes it answer `error=access_denied` instead. */
  installAs(workspace: FakeWorkspace | 'deny'): void;
  /** The workspace's (or an org-wide install's enterprise's) tokens stop working (as on uninstall). */
  revoke(teamId: string): void;
  /** The workspace a token was issued for (an organisation-wide install's: its enterprise). */
  teamOf(token: string | undefined): string | undefined;
  /**
   * Token rotation on (a lifetime in seconds) or off (undefined) for the tokens issued from now on: installs and
   * refreshes then hand out a `refresh_token` and `expires_in`, and a token past its lifetime is refused with
   * `token_expired`.
   */
  rotateTokens(expiresInSeconds: number | undefined): void;
  /** The workspace's access tokens expire now (as if Slack's clock ran ahead of the bot's). */
  expire(teamId: string): void;
  /** Every `grant_type=refresh_token` exchange, oldest first: refreshed, or refused as a used refresh token. */
  refreshes: { refreshToken: string; outcome: 'refreshed' | 'invalid_refresh_token' }[];
  authorize(query: URLSearchParams, res: ServerResponse): void;
  /** The answer to a call: a refusal of its token, an OAuth method's answer, or undefined (go on). */
  reply(method: string, params: Record<string, unknown>, token: string | undefined): FakeReply | undefined;
}

const ok = (fields: Record<string, unknown>): FakeReply => ({ body: { ok: true, ...fields } });

/** What `oauth.v2.access` says of an installation besides its tokens. */
function installed(workspace: FakeWorkspace): Record<string, unknown> {
  const org = workspace.teamId === undefined;
  return {
    app_id: 'A1',
    authed_user: { id: workspace.userId ?? 'UINSTALLER' },
    scope: 'app_mentions:read,chat:write',
    token_type: 'bot',
    bot_user_id: 'UBOT',
    team: org ? null : { id: workspace.teamId, name: workspace.teamName ?? `Team ${workspace.teamId}` },
    enterprise: workspace.enterpriseId ? { id: workspace.enterpriseId, name: 'Org' } : null,
    is_enterprise_install: org,
  };
}
const error = (code: string): FakeReply => ({ body: { ok: false, error: code } });

/** Methods a request may make without a bot token (Socket Mode's connection takes the app-level token). */
const WITHOUT_BOT_TOKEN = new Set([
  'oauth.v2.access',
  'openid.connect.token',
  'openid.connect.userInfo',
  'apps.connections.open',
]);

export function createFakeSlackOAuth(): FakeSlackOAuth {
  let app: { clientId: string; clientSecret: string; redirectUrl: string } | undefined;
  let next: FakeWorkspace | 'deny' = { teamId: 'T1' };
  const codes = new Map<string, FakeWorkspace>();
  const tokens = new Map<string, { workspace: FakeWorkspace; revoked: boolean; expiresAt?: number }>();
  /** Refresh tokens, each usable once. */
  const refreshTokens = new Map<string, { workspace: FakeWorkspace; used: boolean }>();
  let lifetime: number | undefined;
  const refreshes: FakeSlackOAuth['refreshes'] = [];

  /** A new access token for `workspace`, with its refresh token and lifetime when rotation is on. */
  const issue = (workspace: FakeWorkspace) => {
    const token = `xoxb-${workspace.teamId ?? workspace.enterpriseId}-${randomBytes(9).toString('hex')}`;
    if (lifetime === undefined) {
      tokens.set(token, { workspace, revoked: false });
      return { access_token: token };
    }
    tokens.set(token, { workspace, revoked: false, expiresAt: Date.now() + lifetime * 1000 });
    const refresh = `xoxe-1-${randomBytes(12).toString('hex')}`;
    refreshTokens.set(refresh, { workspace, used: false });
    return { access_token: token, refresh_token: refresh, expires_in: lifetime };
  };

  const refresh = (params: Record<string, unknown>): FakeReply => {
    const refreshToken = stringOr(params.refresh_token) ?? '';
    const known = refreshTokens.get(refreshToken);
    if (!known || known.used) {
      refreshes.push({ refreshToken, outcome: 'invalid_refresh_token' });
      return error('invalid_refresh_token');
    }
    known.used = true;
    refreshes.push({ refreshToken, outcome: 'refreshed' });
    return ok({ ...installed(known.workspace), ...issue(known.workspace) });
  };

  const access = (params: Record<string, unknown>): FakeReply => {
    if (stringOr(params.client_id) !== app?.clientId) return error('invalid_client_id');
    if (stringOr(params.client_secret) !== app?.clientSecret) return error('bad_client_secret');
    if (stringOr(params.grant_type) === 'refresh_token') return refresh(params);
    const code = stringOr(params.code) ?? '';
    const workspace = codes.get(code);
    if (!workspace) return error('invalid_code');
    codes.delete(code);
    return ok({ ...installed(workspace), ...issue(workspace) });
  };

  return {
    refreshes,
    enable: (given) => {
      app = given;
    },
    installAs: (workspace) => {
      next = workspace;
    },
    revoke: (teamId) => {
      for (const issued of tokens.values())
        if ((issued.workspace.teamId ?? issued.workspace.enterpriseId) === teamId) issued.revoked = true;
    },
    rotateTokens: (seconds) => {
      lifetime = seconds;
    },
    expire: (teamId) => {
      for (const issued of tokens.values())
        if ((issued.workspace.teamId ?? issued.workspace.enterpriseId) === teamId)
          issued.expiresAt = Date.now();
    },
    teamOf: (token) => {
      const workspace = token === undefined ? undefined : tokens.get(token)?.workspace;
      return workspace?.teamId ?? workspace?.enterpriseId;
    },
    authorize: (query, res) => {
      const back = new URL(app?.redirectUrl ?? 'http://127.0.0.1/');
      const state = query.get('state');
      if (state !== null) back.searchParams.set('state', state);
      if (next === 'deny' || query.get('client_id') !== app?.clientId) {
        back.searchParams.set('error', 'access_denied');
      } else {
        const code = randomBytes(12).toString('hex');
        codes.set(code, next);
        back.searchParams.set('code', code);
      }
      res.writeHead(302, { location: back.href });
      res.end();
    },
    reply: (method, params, token) => {
      if (!app) return undefined;
      if (method === 'oauth.v2.access') return access(params);
      if (WITHOUT_BOT_TOKEN.has(method)) return undefined;
      const issued = token === undefined ? undefined : tokens.get(token);
      if (!issued) return error('invalid_auth');
      if (issued.revoked) return error('token_revoked');
      if (issued.expiresAt !== undefined && Date.now() >= issued.expiresAt) return error('token_expired');
      if (method === 'auth.teams.list') {
        // An org-wide install's workspaces, in one page (Slack pages them with `cursor`).
        const teams = issued.workspace.teams ?? [];
        return ok({
          teams: teams.map((id) => ({ id, name: `Team ${id}` })),
          response_metadata: { next_cursor: '' },
        });
      }
      if (method === 'auth.test') {
        const { workspace } = issued;
        return ok({
          url: 'https://test.slack.com/',
          team: workspace.teamName ?? 'Test',
          user: 'agent',
          team_id: workspace.teamId ?? workspace.enterpriseId,
          user_id: 'UBOT',
          bot_id: 'BBOT',
          is_enterprise_install: workspace.teamId === undefined,
          ...(workspace.enterpriseId ? { enterprise_id: workspace.enterpriseId } : {}),
        });
      }
      return undefined;
    },
  };
}
