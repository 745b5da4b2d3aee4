import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS, openTestStores, type TestStores } from '../support/test-database.js';

/** Each workspace's admins (OAuth mode), the same on SQLite and on PostgreSQL. */
describe.each(DATABASE_KINDS)('team admins on %s', (kind) => {
  let s: TestStores;
  beforeEach(async () => {
    s = await openTestStores(kind);
  });
  afterEach(async () => s.close());

  const install = (teamId: string, installer: string) =>
    s.stores.installations.save(
      {
        id: `T:${teamId}`,
        teamId,
        enterpriseId: null,
        enterpriseInstall: false,
        installerUserId: installer,
        botUserId: 'UBOT',
        sealed: 'v1:k:iv:sealed',
        installedAt: 1,
        updatedAt: 1,
      },
      [],
    );
  let at = 10;
  const change = (teamId: string, action: 'add' | 'remove', userId: string, by = 'UINSTALLER') => {
    at += 1;
    return s.stores.teamAdmins.change({ teamId, userId, action, by, at });
  };

  it("a workspace's installer is its first admin; another workspace's installer is nothing there", async () => {
    await install('T1', 'UONE');
    await install('T2', 'UTWO');
    expect(await s.stores.teamAdmins.adminsOf('T1')).toEqual(['UONE']);
    expect(await s.stores.teamAdmins.adminsOf('T2')).toEqual(['UTWO']);
    expect(await s.stores.teamAdmins.adminsOf('T3')).toEqual([]);
  });

  it('changes keep the installer until removed, never leave a workspace without an admin, and are audited', async () => {
    await install('T1', 'UONE');
    expect(await change('T1', 'remove', 'UONE')).toMatchObject({ ok: false, reason: 'last_admin' });
    expect(await change('T1', 'add', 'UANN', 'UONE')).toEqual({ ok: true, admins: ['UONE', 'UANN'] });
    expect(await change('T1', 'add', 'UANN', 'UONE')).toMatchObject({ ok: false, reason: 'already_admin' });
    expect(await change('T1', 'remove', 'UBOB')).toMatchObject({ ok: false, reason: 'not_admin' });
    // A reinstall by someone else changes nothing once the list was written.
    await install('T1', 'UOTHER');
    expect(await s.stores.teamAdmins.adminsOf('T1')).toEqual(['UONE', 'UANN']);
    expect(await change('T1', 'remove', 'UONE', 'UANN')).toEqual({ ok: true, admins: ['UANN'] });
    expect(await change('T1', 'remove', 'UANN', 'UANN')).toMatchObject({ ok: false, reason: 'last_admin' });
    expect(await s.stores.teamAdmins.adminsOf('T2')).toEqual([]);
    const events = (await s.stores.auditQueries.chain()).filter((e) => e.kind.startsWith('team.'));
    expect(events.map((e) => [e.kind, e.actor, e.teamId, e.payload.userId])).toEqual([
      ['team.admin_added', 'UONE', 'T1', 'UANN'],
      ['team.admin_removed', 'UANN', 'T1', 'UONE'],
    ]);
  });
});
