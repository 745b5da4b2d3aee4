import { createServer } from 'node:http';
import {
  defaultProcessEventErrorHandler,
  type InstallationStore,
  type Logger,
  type LogLevel,
  SocketModeReceiver,
} from '@slack/bolt';
import type { WebClientOptions } from '@slack/web-api';
import type { OAuthInstallConfig } from '../config.js';
import type { Logger as OurLogger } from '../logger.js';
import { oauthReceiverOptions } from './installations/oauth-installer.js';
import { installationUnreadable } from './slack-errors.js';

type CustomRoutes = NonNullable<ConstructorParameters<typeof SocketModeReceiver>[0]['customRoutes']>;

/**
 * Bolt's Socket Mode receiver on the one app-level token, with `customRoutes` (/healthz, the console) on `port`.
 * Installed into several workspaces (`oauth`), the same port also serves `/slack/install` and
 * `/slack/oauth_redirect` through Bolt's own `InstallProvider`, exactly as in HTTP mode, and Bolt's `authorize`
 * reads each envelope's installation (its team's token) from the store.
 */
export function createSocketReceiver(options: {
  appToken: string;
  port: number;
  logger: Logger;
  logLevel: LogLevel;
  customRoutes: CustomRoutes;
  clientOptions: WebClientOptions;
  pingTimeoutMs: number | undefined;
  oauth:
    | {
        config: OAuthInstallConfig;
        installations: InstallationStore;
        useStateOnce: (nonce: string) => Promise<boolean>;
        apiUrl: string;
        logger: OurLogger;
      }
    | undefined;
}): SocketModeReceiver {
  const { oauth } = options;
  const install = oauth
    ? oauthReceiverOptions(oauth.config, {
        apiUrl: oauth.apiUrl,
        installations: oauth.installations,
        useStateOnce: oauth.useStateOnce,
        logger: oauth.logger,
      })
    : undefined;
  return new SocketModeReceiver({
    appToken: options.appToken,
    // An event whose installation could not be read (a database error) is left unacknowledged, so Slack sends
    // it again; Bolt would acknowledge it as one for a workspace without an installation, and it would be lost.
    processEventErrorHandler: async (args) =>
      !installationUnreadable(args.error) && defaultProcessEventErrorHandler(args),
    logger: options.logger,
    logLevel: options.logLevel,
    customRoutes: options.customRoutes,
    ...(options.pingTimeoutMs ? { clientPingTimeout: options.pingTimeoutMs } : {}),
    ...(install
      ? {
          clientId: install.clientId,
          clientSecret: install.clientSecret,
          installationStore: install.installationStore,
          scopes: install.scopes,
        }
      : {}),
    // What Bolt passes to its own Socket Mode receiver: the HTTP port and the Web API base URL; with installs,
    // the install routes' options too.
    installerOptions: {
      ...install?.installerOptions,
      port: options.port,
      clientOptions: options.clientOptions,
    },
  });
}

/** Rejects when nothing can listen on `port` (another process holds it). */
export function assertPortFree(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (error) => reject(new Error(`PORT ${port} cannot be used: ${error.message}`)));
    probe.listen(port, () => probe.close(() => resolve()));
  });
}
