import type { RequestListener } from 'node:http';
import type { Logger } from '../logger.js';

export interface AvailabilityGateOptions {
  /** The path Bolt serves events, interactivity and commands on. */
  endpoint: string;
  /** Whether what a request needs (the database) works now; asked for every request to `endpoint`. */
  available: () => Promise<boolean>;
  logger: Logger;
}

/**
 * Answers Slack's requests 503 while the bot cannot store what they bring (the database is down, full or
 * read-only), before anything reads them: Slack delivers a refused event again later (and shows a failed click
 * as failed), where accepting it would lose the message and leave the user to send it again. Other routes
 * (`/healthz`) pass untouched.
 */
export function refuseWhileUnavailable(
  listener: RequestListener,
  options: AvailabilityGateOptions,
): RequestListener {
  return (req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (req.method?.toUpperCase() !== 'POST' || path !== options.endpoint) {
      listener(req, res);
      return;
    }
    options.available().then(
      (ok) => {
        if (ok) {
          listener(req, res);
          return;
        }
        options.logger.warn('Slack request refused with 503: the database is unavailable', {});
        req.resume();
        if (res.headersSent) return;
        res.writeHead(503, { 'retry-after': '5' });
        res.end();
      },
      () => listener(req, res),
    );
  };
}
