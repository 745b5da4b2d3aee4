import {
  type Logger as BoltLogger,
  HTTPReceiver,
  type HTTPReceiverOptions,
  type LogLevel,
} from '@slack/bolt';
import type { Logger } from '../logger.js';
import { refuseWhileUnavailable } from './availability-gate.js';
import { guardSlackRequests, type RequestGuardOptions } from './request-guard.js';

/** Requests larger than this get 413 (Slack's own payloads stay far below it). */
export const BODY_LIMIT = 1024 * 1024;

export interface GuardedReceiverOptions {
  signingSecret: string;
  endpoint: string;
  port: number;
  customRoutes: NonNullable<HTTPReceiverOptions['customRoutes']>;
  logLevel: LogLevel;
  logger: Logger;
  /** The receiver's own logging (Bolt's), through the bot's logger without bodies. */
  boltLogger: BoltLogger;
  requests: RequestGuardOptions['requests'];
  takeEarly: RequestGuardOptions['takeEarly'];
  handOver: RequestGuardOptions['handOver'];
  /** Whether requests can be taken now (the database works); they are answered 503 while not. */
  available?: () => Promise<boolean>;
  /** Installs into several workspaces: Bolt's own install routes and `authorize` (oauth-installer.ts). */
  install?: Pick<
    HTTPReceiverOptions,
    'clientId' | 'clientSecret' | 'installationStore' | 'scopes' | 'installerOptions'
  >;
}

/**
 * Bolt's HTTP receiver (signature and 5-minute window checked on every request) with a body limit and the
 * request guard in front, so no request body can crash the process or go unanswered, and no signed request
 * takes effect twice.
 */
export function createGuardedReceiver(options: GuardedReceiverOptions): HTTPReceiver {
  const receiver = new HTTPReceiver({
    signingSecret: options.signingSecret,
    endpoints: options.endpoint,
    port: options.port,
    customRoutes: options.customRoutes,
    logLevel: options.logLevel,
    logger: options.boltLogger,
    bodyLimit: BODY_LIMIT,
    ...options.install,
  });
  const guarded = guardSlackRequests(receiver.requestListener, {
    endpoint: options.endpoint,
    signingSecret: options.signingSecret,
    bodyLimit: BODY_LIMIT,
    logger: options.logger,
    requests: options.requests,
    takeEarly: options.takeEarly,
    handOver: options.handOver,
  });
  const { available } = options;
  receiver.requestListener = available
    ? refuseWhileUnavailable(guarded, { endpoint: options.endpoint, available, logger: options.logger })
    : guarded;
  return receiver;
}
