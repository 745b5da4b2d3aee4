import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { type AuditInput, auditEvent, SYSTEM_ACTOR } from '../audit/audit-event.js';
import type { Clock } from '../clock.js';
import type { ConsoleLinkStore, ConsoleSession, ConsoleSessionStore, SignInMethod } from './ports.js';

/** A one-time link signs in within this time of being issued. */
export const LINK_LIFETIME_MS = 10 * 60_000;
/** A session ends after this long without a request. */
export const SESSION_IDLE_MS = 12 * 60 * 60_000;
/** Ended sessions and used or expired links are kept this long (their events stay in the audit log). */
export const FORGET_AFTER_MS = 30 * 24 * 60 * 60_000;
/** A session's last request is written at most this often (a page load makes several requests). */
const TOUCH_EVERY_MS = 60_000;

export interface ConsoleAccessDeps {
  sessions: ConsoleSessionStore;
  links: ConsoleLinkStore;
  /** Appends events that belong to no session (a refused sign-in). */
  recordAudit: (events: AuditInput[]) => Promise<void>;
  clock: Clock;
}

/** A person who proved who they are, in a workspace. */
export interface Person {
  teamId: string;
  /** Its workspace's Enterprise Grid organisation, when known (Slack's sign-in names it; a link does not). */
  enterpriseId?: string | null;
  userId: string;
}

/** Why a sign-in was refused, as the audit log records it. */
export type SignInRefusal =
  | 'link_unknown_or_used'
  | 'wrong_workspace'
  | 'state_mismatch'
  | 'nonce_mismatch'
  | 'slack_refused'
  | 'not_allowed';

/** A new session: the secret goes in the cookie, never into storage. */
export interface OpenedSession {
  token: string;
  session: ConsoleSession;
}

/**
 * Who is signed in to the web console: one-time links issued on the server, sessions opened by a sign-in,
 * their idle expiry and revocation, each recorded in the audit log. Secrets are random 32 bytes; only their
 * SHA-256 digests are stored, so a database dump signs nobody in.
 */
export class ConsoleAccess {
  readonly #deps: ConsoleAccessDeps;

  constructor(deps: ConsoleAccessDeps) {
    this.#deps = deps;
  }

  /** A link that signs `userId` in once within 10 minutes; `teamId` undefined means the installed workspace. */
  async issueLink(userId: string, teamId: string | undefined): Promise<{ token: string; expiresAt: number }> {
    const now = this.#deps.clock.now();
    const token = newSecret();
    const expiresAt = now + LINK_LIFETIME_MS;
    await this.#deps.links.issue(
      digest(token),
      { userId, teamId: teamId ?? null, createdAt: now, expiresAt },
      [
        auditEvent('console.link_issued', {
          at: now,
          teamId: teamId ?? null,
          payload: { userId, expiresAt: new Date(expiresAt).toISOString() },
        }),
      ],
      now - FORGET_AFTER_MS,
    );
    return { token, expiresAt };
  }

  /**
   * Uses a link up and opens its session; `installedTeam` is the workspace of a link that named none (asked only
   * then: installed into several workspaces, a link names its workspace).
   */
  async redeemLink(
    token: string,
    installedTeam: string | (() => Promise<string>),
  ): Promise<{ ok: true; opened: OpenedSession } | { ok: false }> {
    const link = await this.#deps.links.redeem(digest(token), this.#deps.clock.now());
    if (!link) {
      await this.refused('link_unknown_or_used', undefined);
      return { ok: false };
    }
    return {
      ok: true,
      opened: await this.signIn(
        {
          teamId: link.teamId ?? (typeof installedTeam === 'string' ? installedTeam : await installedTeam()),
          userId: link.userId,
        },
        'link',
      ),
    };
  }

  /** Opens a session for a person who proved who they are. */
  async signIn(person: Person, via: SignInMethod): Promise<OpenedSession> {
    const now = this.#deps.clock.now();
    const token = newSecret();
    const session: ConsoleSession = {
      teamId: person.teamId,
      enterpriseId: person.enterpriseId ?? null,
      userId: person.userId,
      via,
      csrfToken: newSecret(),
      createdAt: now,
      lastSeenAt: now,
      revokedAt: null,
    };
    await this.#deps.sessions.open(
      digest(token),
      session,
      [
        auditEvent('console.signed_in', {
          at: now,
          actor: person.userId,
          teamId: person.teamId,
          enterpriseId: session.enterpriseId,
          payload: { via },
        }),
      ],
      now - FORGET_AFTER_MS,
    );
    return { token, session };
  }

  /** The session a cookie's secret opens now: none when unknown, revoked or idle too long. */
  async session(token: string | undefined): Promise<ConsoleSession | undefined> {
    if (!token) return undefined;
    const hash = digest(token);
    const found = await this.#deps.sessions.find(hash);
    const now = this.#deps.clock.now();
    if (!found || found.revokedAt !== null || now - found.lastSeenAt > SESSION_IDLE_MS) return undefined;
    if (now - found.lastSeenAt >= TOUCH_EVERY_MS) await this.#deps.sessions.touch(hash, now);
    return found;
  }

  async signOut(token: string, session: ConsoleSession): Promise<void> {
    const now = this.#deps.clock.now();
    await this.#deps.sessions.revoke(digest(token), now, [
      auditEvent('console.signed_out', {
        at: now,
        actor: session.userId,
        teamId: session.teamId,
        enterpriseId: session.enterpriseId,
      }),
    ]);
  }

  /** Ends every open session (`npm run console -- sessions --revoke-all`); returns how many were open. */
  revokeAll(): Promise<number> {
    const now = this.#deps.clock.now();
    return this.#deps.sessions.revokeAll(now, now - SESSION_IDLE_MS, (revoked) => [
      auditEvent('console.sessions_revoked', { at: now, payload: { revoked } }),
    ]);
  }

  /** Records a refused sign-in (nobody signed in, so the store has nothing else to write). */
  async refused(reason: SignInRefusal, person: Partial<Person> | undefined): Promise<void> {
    const now = this.#deps.clock.now();
    await this.#deps.recordAudit([
      auditEvent('console.refused', {
        at: now,
        actor: person?.userId ?? SYSTEM_ACTOR,
        teamId: person?.teamId ?? null,
        payload: { reason },
      }),
    ]);
  }
}

/** Whether two secrets are equal, in time that does not depend on where they differ. */
export function sameSecret(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  return timingSafeEqual(Buffer.from(digest(given), 'hex'), Buffer.from(digest(expected), 'hex'));
}

/** A random secret of 32 bytes, base64url: session and link tokens, CSRF tokens, sign-in state and nonce. */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

function digest(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}
