import type { IncomingMessage, ServerResponse } from 'node:http';

/** Pages served on the bot's port beside Slack's endpoints: every method and path under `prefix`. */
export interface ServedPages {
  prefix: string;
  handler: (req: IncomingMessage, res: ServerResponse) => void;
}

/** Bolt's custom routes for every path under the pages' prefix, with each method a page may be asked with. */
export function pageRoutes(pages: ServedPages | undefined) {
  if (!pages) return [];
  return [pages.prefix, `${pages.prefix}/*rest`].map((path) => ({
    path,
    method: ['GET', 'HEAD', 'POST'],
    handler: pages.handler,
  }));
}
