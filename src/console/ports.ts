import type { AuditInput } from '../audit/audit-event.js';

/** How a person signed in to the console. */
export type SignInMethod = 'slack' | 'link';

/** A signed-in person, as the console serves them. */
export interface ConsoleSession {
  teamId: string;
  /** The workspace's Enterprise Grid organisation, as Slack's sign-in named it; null for a link's session. */
  enterpriseId: string | null;
  userId: string;
  via: SignInMethod;
  /** What every state-changing request must carry back (header `X-CSRF-Token` or form field `csrf`). */
  csrfToken: string;
  createdAt: number;
  lastSeenAt: number;
  revokedAt: number | null;
}

/** Sessions, each found by the digest of its cookie's secret. Implemented over either database in src/db. */
export interface ConsoleSessionStore {
  /** Opens a session; rows last used before `forgetBefore` (ended long ago) are deleted with it. */
  open(
    tokenHash: string,
    session: Omit<ConsoleSession, 'revokedAt'>,
    audit: AuditInput[],
    forgetBefore: number,
  ): Promise<void>;
  find(tokenHash: string): Promise<ConsoleSession | undefined>;
  /** Records a request at `at`, so the session's idle time starts again. */
  touch(tokenHash: string, at: number): Promise<void>;
  /** Ends one session (sign-out); false when it had ended already. */
  revoke(tokenHash: string, at: number, audit: AuditInput[]): Promise<boolean>;
  /** Ends every session not revoked and used since `activeSince`; returns how many. */
  revokeAll(at: number, activeSince: number, audit: (revoked: number) => AuditInput[]): Promise<number>;
}

export interface ConsoleLink {
  userId: string;
  /** The workspace the issuer named; null for the installed one. */
  teamId: string | null;
  createdAt: number;
  expiresAt: number;
}

/** One-time sign-in links, each found by the digest of its secret. */
export interface ConsoleLinkStore {
  /** Stores a new link; links that expired before `forgetBefore` are deleted with it. */
  issue(tokenHash: string, link: ConsoleLink, audit: AuditInput[], forgetBefore: number): Promise<void>;
  /**
   * Marks the link used at `at` and returns it, when it exists, was never used and has not expired; else
   * undefined. Of two redemptions racing, one wins.
   */
  redeem(tokenHash: string, at: number): Promise<ConsoleLink | undefined>;
}

/** Who Slack says signed in, or why it would not say. */
export type SlackIdentity =
  | {
      ok: true;
      teamId: string;
      /** The workspace's Enterprise Grid organisation (`https://slack.com/enterprise_id`), when it has one. */
      enterpriseId: string | null;
      userId: string;
      /** The `nonce` claim of the ID token: the one sent with the authorize request, unless replayed. */
      nonce: string | undefined;
    }
  | { ok: false; problem: string };

/**
 * Sign in with Slack (OpenID Connect), as the console needs it: where to send the person, and who they are once
 * Slack sends them back with a code. Implemented over Slack's Web API in src/slack.
 */
export interface SlackSignIn {
  /** Slack's authorize URL asking for `openid profile`, with the state and nonce to bind to the browser. */
  authorizeUrl(request: { redirectUri: string; state: string; nonce: string }): string;
  /** Exchanges a code for the person it signs in; every failure (refused code, network) is a value. */
  identify(code: string, redirectUri: string): Promise<SlackIdentity>;
}
