import type { AuditInput } from '../audit/audit-event.js';

/** How a person signed in to the console. */
export type SignInMethod = 'slack' | 'link';

/** A signed-in person, as the console serves them. */
export interface ConsoleSession {
  teamId: string;
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
