import { WebClient } from '@slack/web-api';
import { describeError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { slackErrorCode } from '../slack-errors.js';
import type { InstalledWorkspace } from './installation-records.js';
import { INSTALL_PATH } from './oauth-installer.js';
import { DEAD_TOKEN } from './team-clients.js';

/** What `/healthz` says of the installations. */
export interface InstallationsHealth {
  /** At least one installation works (or none is installed yet). */
  ok: boolean;
  installed: number;
  /** The workspaces (or organisations) whose token Slack refuses, or that cannot be read. */
  refused: string[];
  /** Said even without details: how to start when nothing is installed. */
  note?: string;
}

export const NOTHING_INSTALLED = `no workspace installed yet, open ${INSTALL_PATH}`;

/** A refused token is looked at again this often; `/healthz` in between answers from the last look. */
export const INSTALLATION_CHECK_MS = 60_000;

/**
 * The health of a bot installed into several workspaces: healthy while at least one installation's token
 * works (asked with `auth.test`, at most once a minute however often `/healthz` is asked, one look at a time);
 * with none installed, healthy, saying how to install. Slack unreachable is not a refused token: a workspace
 * counts as refused only when Slack answers that its token is dead (or the stored one cannot be read). Each
 * workspace that becomes refused is named once in the log with what to do.
 */
export function createInstallationHealth(deps: {
  workspaces: () => Promise<InstalledWorkspace[]>;
  /** `auth.test` with this token. */
  probe: (token: string) => Promise<unknown>;
  now: () => number;
  logger: Logger;
  everyMs?: number;
}): { check(): Promise<InstallationsHealth> } {
  const everyMs = deps.everyMs ?? INSTALLATION_CHECK_MS;
  let last: { at: number; health: InstallationsHealth } | undefined;
  let looking: Promise<InstallationsHealth> | undefined;
  const known = new Set<string>();

  const refusedBy = async (workspace: InstalledWorkspace): Promise<string | undefined> => {
    if (workspace.botToken === undefined) return 'no readable bot token';
    try {
      await deps.probe(workspace.botToken);
      return undefined;
    } catch (error) {
      const code = slackErrorCode(error);
      return code !== undefined && DEAD_TOKEN.has(code) ? describeError(error) : undefined;
    }
  };

  const look = async (): Promise<InstallationsHealth> => {
    const workspaces = await deps.workspaces();
    if (workspaces.length === 0) return { ok: true, installed: 0, refused: [], note: NOTHING_INSTALLED };
    const refused: string[] = [];
    for (const workspace of workspaces) {
      const name = workspace.teamId ?? workspace.enterpriseId ?? 'unknown';
      const problem = await refusedBy(workspace);
      if (problem === undefined) {
        known.delete(name);
        continue;
      }
      refused.push(name);
      if (!known.has(name))
        deps.logger.error('slack refuses the token of an installed workspace', {
          workspace: name,
          problem,
          fix: `install the app there again from ${INSTALL_PATH} (or, if it was removed for good, nothing: its events stopped)`,
        });
      known.add(name);
    }
    return { ok: refused.length < workspaces.length, installed: workspaces.length, refused };
  };

  return {
    async check() {
      if (last && deps.now() - last.at < everyMs) return last.health;
      looking ??= look()
        .then((health) => {
          // Nothing installed costs no call to Slack: looked at again each time, so an install shows at once.
          last = health.installed > 0 ? { at: deps.now(), health } : undefined;
          return health;
        })
        .finally(() => {
          looking = undefined;
        });
      return looking;
    },
  };
}

/** `auth.test` at Slack's Web API with a token, answered within 5 s, never retried (the next look asks again). */
export function authTest(apiUrl: string): (token: string) => Promise<unknown> {
  return (token) =>
    new WebClient(token, { slackApiUrl: apiUrl, timeout: 5_000, retryConfig: { retries: 0 } }).auth.test();
}
