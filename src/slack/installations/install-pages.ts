import type { ServerResponse } from 'node:http';

/** What the installer is told at the end of an install, and the status it is told with. */
export type InstallOutcome =
  | { kind: 'installed'; where: string }
  | { kind: 'cancelled' }
  | { kind: 'state_refused'; reason: 'missing' | 'forged' | 'expired' | 'used' }
  | { kind: 'failed' };

const STATE_WORDS = {
  missing: 'it did not come from this install page (or cookies are blocked in this browser)',
  forged: 'it was not issued by this bot',
  expired: 'it is more than ten minutes old',
  used: 'it was used already',
} as const;

/** The page's title, what it says, and its HTTP status. */
export function describeInstallOutcome(outcome: InstallOutcome): {
  title: string;
  text: string;
  status: number;
} {
  const again = 'Start again from the install page.';
  switch (outcome.kind) {
    case 'installed':
      return {
        title: 'Installed',
        text: `The app is installed in ${outcome.where}. You can close this page.`,
        status: 200,
      };
    case 'cancelled':
      return {
        title: 'Not installed',
        text: `The install was cancelled in Slack; nothing was stored. ${again}`,
        status: 200,
      };
    case 'state_refused':
      return {
        title: 'Not installed',
        text: `This install link cannot be used: ${STATE_WORDS[outcome.reason]}. Nothing was stored. ${again}`,
        status: 400,
      };
    case 'failed':
      return {
        title: 'Not installed',
        text: `Slack did not complete the install; nothing was stored. ${again}`,
        status: 502,
      };
  }
}

/** Writes the page: plain HTML, every value escaped, no script. */
export function sendInstallPage(res: ServerResponse, outcome: InstallOutcome, installPath: string): void {
  const { title, text, status } = describeInstallOutcome(outcome);
  const link =
    outcome.kind === 'installed' ? '' : `<p><a href="${escapeHtml(installPath)}">Install page</a></p>`;
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': "default-src 'none'",
    'cache-control': 'no-store',
  });
  res.end(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>` +
      `<body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p>${link}</body></html>`,
  );
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
