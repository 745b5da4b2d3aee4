import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS, openTestStores, type TestStores } from '../support/test-database.js';

/** Each workspace's admins (OAuth mode), the same on SQLite and on PostgreSQL. */
describe.each(DATABASE_KINDS)('team admins on %s', (kind) => {
  let s: TestStores;
  beforeEach(async () => {
    s = await openTestStores(kind);
  });
  afterEach(async () => s.close());

  let installs = 0;
  /** A workspace's own install; each later one is newer. */
  const install = (teamId: string, installer: string, enterpriseId: string | null = null) =>
    s.stores.installations.save(
      {
        id: `T:${teamId}`,
        teamId,
        enterpriseId,
        enterpriseInstall: false,
        installerUserId: installer,
        botUserId: 'UBOT',
        sealed: 'v1:k:iv:sealed',
        installedAt: 1,
        updatedAt: ++installs,
      },
      [],
    );
  /** An org-wide install (Enterprise Grid): stored by its enterprise ID, with no workspace of its own. */
  const installForOrganisation = (enterpriseId: string, installer: string) =>
    s.stores.installations.save(
      {
        id: `E:${enterpriseId}`,
        teamId: null,
        enterpriseId,
        enterpriseInstall: true,
        installerUserId: installer,
        botUserId: 'UBOT',
        sealed: 'v1:k:iv:sealed',
        installedAt: 1,
        updatedAt: 1,
      },
      [],
    );
  let at = 10;
  const change = (
    teamId: string,
    action: 'add' | 'remove',
    userId: string,
    by = 'UINSTALLER',
    enterpriseId: string | undefined = undefined,
  ) => {
    at += 1;
    return s.stores.teamAdmins.change({ teamId, enterpriseId, userId, action, by, at });
  };
  const adminsOf = (teamId: string, enterpriseId?: string) =>
    s.stores.teamAdmins.adminsOf(teamId, enterpriseId);

  it("a workspace's installer is its first admin; another workspace's installer is nothing there", async () => {
    await install('T1', 'UONE');
    await install('T2', 'UTWO');
    expect(await adminsOf('T1')).toEqual(['UONE']);
    expect(await adminsOf('T2')).toEqual(['UTWO']);
    expect(await adminsOf('T3')).toEqual([]);
  });

  it('changes keep the installer until removed, never leave a workspace without an admin, and are audited', async () => {
    await install('T1', 'UONE');
    expect(await change('T1', 'remove', 'UONE')).toMatchObject({ ok: false, reason: 'last_admin' });
    expect(await change('T1', 'add', 'UANN', 'UONE')).toEqual({ ok: true, admins: ['UONE', 'UANN'] });
    expect(await change('T1', 'add', 'UANN', 'UONE')).toMatchObject({ ok: false, reason: 'already_admin' });
    expect(await change('T1', 'remove', 'UBOB')).toMatchObject({ ok: false, reason: 'not_admin' });
    // A reinstall by someone else changes nothing once the list was written.
    await install('T1', 'UOTHER');
    expect(await adminsOf('T1')).toEqual(['UONE', 'UANN']);
    expect(await change('T1', 'remove', 'UONE', 'UANN')).toEqual({ ok: true, admins: ['UANN'] });
    expect(await change('T1', 'remove', 'UANN', 'UANN')).toMatchObject({ ok: false, reason: 'last_admin' });
    expect(await adminsOf('T2')).toEqual([]);
    const events = (await s.stores.auditQueries.chain()).filter((e) => e.kind.startsWith('team.'));
    expect(events.map((e) => [e.kind, e.actor, e.teamId, e.payload.userId])).toEqual([
      ['team.admin_added', 'UONE', 'T1', 'UANN'],
      ['team.admin_removed', 'UANN', 'T1', 'UONE'],
    ]);
  });

  it("an org-wide install's installer is the admin of each workspace of that organisation with no install of its own", async () => {
    await installForOrganisation('E1', 'WORGADMIN');
    await install('T3', 'WTHREE', 'E1');
    await install('T9', 'UNINE');
    expect(await adminsOf('T2', 'E1')).toEqual(['WORGADMIN']);
    // A workspace of the organisation installed on its own keeps its own installer.
    expect(await adminsOf('T3', 'E1')).toEqual(['WTHREE']);
    // Outside the organisation, whatever organisation is named: its own installer, or nobody.
    expect(await adminsOf('T9', 'E1')).toEqual(['UNINE']);
    expect(await adminsOf('T2')).toEqual([]);
    expect(await adminsOf('T2', 'E2')).toEqual([]);
  });

  it("a workspace's first change keeps its organisation's installer in the list until removed", async () => {
    await installForOrganisation('E1', 'WORGADMIN');
    expect(await change('T2', 'add', 'WANN', 'WORGADMIN', 'E1')).toEqual({
      ok: true,
      admins: ['WORGADMIN', 'WANN'],
    });
    // The list now stands on its own: another org-wide installer changes nothing.
    await installForOrganisation('E1', 'WOTHER');
    expect(await adminsOf('T2', 'E1')).toEqual(['WORGADMIN', 'WANN']);
    expect(await change('T2', 'remove', 'WORGADMIN', 'WANN', 'E1')).toEqual({ ok: true, admins: ['WANN'] });
    expect(await adminsOf('T2', 'E1')).toEqual(['WANN']);
    const events = (await s.stores.auditQueries.chain()).filter((e) => e.kind.startsWith('team.'));
    expect(events.map((e) => [e.kind, e.actor, e.teamId, e.enterpriseId, e.payload.userId])).toEqual([
      ['team.admin_added', 'WORGADMIN', 'T2', 'E1', 'WANN'],
      ['team.admin_removed', 'WANN', 'T2', 'E1', 'WORGADMIN'],
    ]);
  });
});
