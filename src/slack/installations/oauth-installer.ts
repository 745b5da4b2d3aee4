import type { HTTPReceiverOptions, InstallationStore } from '@slack/bolt';
import type { OAuthInstallConfig } from '../../config.js';
import type { Logger } from '../../logger.js';
import { BOT_SCOPES } from './bot-scopes.js';
import { sendInstallPage } from './install-pages.js';
import { createInstallStateStore, refusedStateReason } from './install-state.js';

export const INSTALL_PATH = '/slack/install';
export const REDIRECT_PATH = '/slack/oauth_redirect';

/** The install routes' options, all set: what Bolt's HTTP and Socket Mode receivers both take. */
type InstallRouteOptions = Required<
  Pick<
    NonNullable<HTTPReceiverOptions['installerOptions']>,
    | 'installPath'
    | 'redirectUriPath'
    | 'stateStore'
    | 'authorizationUrl'
    | 'clientOptions'
    | 'callbackOptions'
  >
>;

/**
 * What Bolt's HTTP receiver needs to serve installs with its own `InstallProvider`: `GET /slack/install` (the
 * "Add to Slack" page, its link to Slack's authorize page with the manifest's bot scopes and a signed state)
 * and `GET /slack/oauth_redirect` (the code exchanged with `oauth.v2.access` at SLACK_API_URL, the installation
 * stored in `installations`), with a page of ours for every outcome. Bolt's `authorize` then reads the same
 * store for every incoming request. The same options serve Bolt's HTTP receiver and its Socket Mode receiver.
 */
export function oauthReceiverOptions(
  oauth: OAuthInstallConfig,
  deps: {
    apiUrl: string;
    installations: InstallationStore;
    /** Records a state's nonce once; false when it was recorded already (a replay). */
    useStateOnce: (nonce: string) => Promise<boolean>;
    logger: Logger;
  },
): Pick<HTTPReceiverOptions, 'clientId' | 'clientSecret' | 'installationStore' | 'scopes'> & {
  installerOptions: InstallRouteOptions;
} {
  const { logger } = deps;
  return {
    clientId: oauth.clientId,
    clientSecret: oauth.clientSecret,
    installationStore: deps.installations,
    scopes: [...BOT_SCOPES],
    installerOptions: {
      installPath: INSTALL_PATH,
      redirectUriPath: REDIRECT_PATH,
      stateStore: createInstallStateStore(oauth.stateSecret, deps.useStateOnce),
      // Slack's authorize page sits beside its Web API (slack.com, slack-gov.com, a test's fake).
      authorizationUrl: new URL('../oauth/v2/authorize', deps.apiUrl).href,
      clientOptions: { slackApiUrl: deps.apiUrl },
      callbackOptions: {
        success: (installation, _options, _req, res) => {
          const where = installation.isEnterpriseInstall
            ? `the organisation ${installation.enterprise?.name ?? installation.enterprise?.id ?? ''}`
            : `the workspace ${installation.team?.name ?? installation.team?.id ?? ''}`;
          logger.info('app installed', {
            teamId: installation.team?.id,
            enterpriseId: installation.enterprise?.id,
            enterpriseInstall: installation.isEnterpriseInstall === true,
          });
          sendInstallPage(res, { kind: 'installed', where }, INSTALL_PATH);
        },
        failure: (error, _options, _req, res) => {
          const refused = refusedStateReason(error);
          const outcome =
            error.code === 'slack_oauth_installer_authorization_error'
              ? ({ kind: 'cancelled' } as const)
              : refused
                ? ({ kind: 'state_refused', reason: refused } as const)
                : error.code === 'slack_oauth_missing_state' || error.code === 'slack_oauth_invalid_state'
                  ? ({ kind: 'state_refused', reason: 'missing' } as const)
                  : ({ kind: 'failed' } as const);
          logger.warn('app install not completed', { outcome: outcome.kind, code: error.code });
          sendInstallPage(res, outcome, INSTALL_PATH);
        },
      },
    },
  };
}
