import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ConsoleAccess,
  FORGET_AFTER_MS,
  LINK_LIFETIME_MS,
  SESSION_IDLE_MS,
} from '../../src/console/console-access.js';
import { rows } from '../e2e/db-rows.js';
import { DATABASE_KINDS, openTestStores, type TestStores } from '../support/test-database.js';

/** Sessions and one-time links of the web console, on both databases, with the time under the test's control. */
describe.each(DATABASE_KINDS)('console access on %s', (kind) => {
  const clock = { at: Date.now(), now: () => clock.at };
  let s: TestStores;
  let access: ConsoleAccess;
  beforeEach(async () => {
    clock.at = Date.now();
    s = await openTestStores(kind, { clock });
    access = new ConsoleAccess({
      sessions: s.stores.consoleSessions,
      links: s.stores.consoleLinks,
      recordAudit: (events) => s.stores.approvals.recordAudit(events),
      clock,
    });
  });
  afterEach(async () => s.close());

  const kinds = async () =>
    (await rows(s.fresh.config, 'select kind from audit_events order by seq')).map((r) => r.kind);

  it('a link signs in once, for its own user and the installed workspace unless it names one', async () => {
    const { token } = await access.issueLink('U1', undefined);
    const first = await access.redeemLink(token, 'T1');
    expect(first).toMatchObject({
      ok: true,
      opened: { session: { userId: 'U1', teamId: 'T1', via: 'link' } },
    });
    expect(await access.redeemLink(token, 'T1')).toEqual({ ok: false });
    const named = await access.issueLink('U2', 'T9');
    expect(await access.redeemLink(named.token, 'T1')).toMatchObject({
      ok: true,
      opened: { session: { teamId: 'T9' } },
    });
    expect(await kinds()).toEqual([
      'console.link_issued',
      'console.signed_in',
      'console.refused',
      'console.link_issued',
      'console.signed_in',
    ]);
  });

  it('of two redemptions of one link racing, one signs in', async () => {
    const { token } = await access.issueLink('U1', undefined);
    const both = await Promise.all([access.redeemLink(token, 'T1'), access.redeemLink(token, 'T1')]);
    expect(both.filter((r) => r.ok)).toHaveLength(1);
  });

  it('a link expires 10 minutes after it was issued', async () => {
    const { token } = await access.issueLink('U1', undefined);
    clock.at += LINK_LIFETIME_MS;
    expect(await access.redeemLink(token, 'T1')).toEqual({ ok: false });
  });

  it('a session ends after 12 hours without a request, lasts while used, and ends when revoked', async () => {
    const used = await access.signIn({ teamId: 'T1', userId: 'U1' }, 'slack');
    const idle = await access.signIn({ teamId: 'T1', userId: 'U2' }, 'slack');
    clock.at += SESSION_IDLE_MS / 2;
    expect(await access.session(used.token)).toMatchObject({ userId: 'U1' });
    clock.at += SESSION_IDLE_MS / 2 + 1;
    expect(await access.session(used.token)).toMatchObject({ userId: 'U1' });
    expect(await access.session(idle.token)).toBeUndefined();
    expect(await access.session('not-a-session')).toBeUndefined();
    expect(await access.revokeAll()).toBe(1);
    expect(await access.session(used.token)).toBeUndefined();
    expect(await kinds()).toContain('console.sessions_revoked');
  });

  it('ended sessions and old links are deleted 30 days on, when the next ones are made', async () => {
    await access.signIn({ teamId: 'T1', userId: 'U1' }, 'slack');
    await access.issueLink('U1', undefined);
    clock.at += FORGET_AFTER_MS + LINK_LIFETIME_MS + 1;
    await access.signIn({ teamId: 'T1', userId: 'U2' }, 'slack');
    await access.issueLink('U2', undefined);
    const sessions = await rows(s.fresh.config, 'select user_id from console_sessions');
    const links = await rows(s.fresh.config, 'select user_id from console_links');
    expect(sessions.map((r) => r.user_id)).toEqual(['U2']);
    expect(links.map((r) => r.user_id)).toEqual(['U2']);
  });

  it('stores only digests: neither a session nor a link secret is in the database', async () => {
    const { token: link } = await access.issueLink('U1', undefined);
    const { token: session } = await access.signIn({ teamId: 'T1', userId: 'U1' }, 'link');
    const dump = JSON.stringify([
      await rows(s.fresh.config, 'select * from console_sessions'),
      await rows(s.fresh.config, 'select * from console_links'),
    ]);
    expect(dump).not.toContain(session);
    expect(dump).not.toContain(link);
    if (s.fresh.config.kind === 'sqlite') {
      await s.db.close();
      const file = readFileSync(s.fresh.config.path, 'latin1') + readWal(s.fresh.config.path);
      expect(file).not.toContain(session);
      expect(file).not.toContain(link);
    }
  });
});

function readWal(path: string): string {
  try {
    return readFileSync(`${path}-wal`, 'latin1');
  } catch {
    return '';
  }
}
