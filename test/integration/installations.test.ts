import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Installation } from '@slack/bolt';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runDbCli } from '../../src/cli/db-cli.js';
import { AppError } from '../../src/errors.js';
import {
  createSealedInstallations,
  type SealedInstallations,
} from '../../src/slack/installations/installation-store.js';
import { rotateTokenKey } from '../../src/slack/installations/rotate-token-key.js';
import { createTokenCipher } from '../../src/slack/installations/token-cipher.js';
import { rows } from '../e2e/db-rows.js';
import { DATABASE_KINDS, openTestStores, type TestStores } from '../support/test-database.js';

const OLD_KEY = randomBytes(32);
const NEW_KEY = randomBytes(32);

/** What `InstallProvider` stores after `oauth.v2.access`: a workspace's install, or an organisation's. */
function workspaceInstall(teamId: string, token: string, enterpriseId?: string): Installation {
  return {
    team: { id: teamId, name: `Team ${teamId}` },
    enterprise: enterpriseId ? { id: enterpriseId } : undefined,
    user: { id: 'UINSTALLER', token: `xoxp-user-${token}`, scopes: [] },
    bot: { token, id: 'BBOT', userId: 'UBOT', scopes: ['chat:write', 'app_mentions:read'] },
    appId: 'A1',
    isEnterpriseInstall: false,
    authVersion: 'v2',
  };
}

function orgInstall(enterpriseId: string, token: string): Installation {
  return {
    team: undefined,
    enterprise: { id: enterpriseId, name: 'Org' },
    user: { id: 'WADMIN', token: undefined, scopes: undefined },
    bot: { token, id: 'BORG', userId: 'UORGBOT', scopes: ['chat:write'] },
    isEnterpriseInstall: true,
    authVersion: 'v2',
  };
}

const secretToken = () => `xoxb-${randomBytes(12).toString('hex')}`;

describe.each(DATABASE_KINDS)('installations on %s', (kind) => {
  let s: TestStores;
  let store: SealedInstallations;
  const clock = { now: () => Date.now() };
  const withKeys = (current: Buffer, previous?: Buffer) =>
    createSealedInstallations(s.stores.installations, createTokenCipher({ current, previous }), clock);
  beforeEach(async () => {
    s = await openTestStores(kind);
    store = withKeys(NEW_KEY);
  });
  afterEach(async () => s.close());

  it("stores a workspace's install by team and an organisation's by enterprise, and Bolt fetches each", async () => {
    const t1 = secretToken();
    const org = secretToken();
    await store.storeInstallation(workspaceInstall('T1', t1));
    await store.storeInstallation(orgInstall('E1', org));
    const fetched = await store.fetchInstallation({
      teamId: 'T1',
      enterpriseId: undefined,
      isEnterpriseInstall: false,
    });
    expect(fetched.bot?.token).toBe(t1);
    expect(fetched.team?.id).toBe('T1');
    const orgWide = await store.fetchInstallation({
      teamId: undefined,
      enterpriseId: 'E1',
      isEnterpriseInstall: true,
    });
    expect(orgWide.bot?.token).toBe(org);
    expect(await store.botToken('T1')).toBe(t1);
    // A workspace of the organisation without an install of its own speaks with the organisation's token.
    expect(await store.botToken('T9', 'E1')).toBe(org);
    expect(await store.botToken('T9')).toBeUndefined();
    // Another person's query never gets the installer's user token.
    const other = await store.fetchInstallation({
      teamId: 'T1',
      enterpriseId: undefined,
      isEnterpriseInstall: false,
      userId: 'USOMEONE',
    });
    expect(other.user.token).toBeUndefined();
    expect(other.bot?.token).toBe(t1);
    const missing = store.fetchInstallation({
      teamId: 'T2',
      enterpriseId: undefined,
      isEnterpriseInstall: false,
    });
    await expect(missing).rejects.toMatchObject({ code: 'slack.not_installed' });
    const audited = await rows(
      s.fresh.config,
      "select kind, team_id, actor from audit_events where kind = 'installation.added' order by seq",
    );
    expect(audited).toEqual([
      { kind: 'installation.added', team_id: 'T1', actor: 'UINSTALLER' },
      { kind: 'installation.added', team_id: null, actor: 'WADMIN' },
    ]);
  });

  it('deletes as Bolt asks (by team, by enterprise), audited, and a reinstall starts clean', async () => {
    await store.storeInstallation(workspaceInstall('T1', secretToken()));
    await store.storeInstallation(orgInstall('E1', secretToken()));
    await store.deleteInstallation?.({ teamId: 'T1', enterpriseId: undefined, isEnterpriseInstall: false });
    await store.deleteInstallation?.({ teamId: undefined, enterpriseId: 'E1', isEnterpriseInstall: true });
    expect(await store.botToken('T1')).toBeUndefined();
    expect(await store.botToken('T9', 'E1')).toBeUndefined();
    expect(await store.remove({ teamId: 'T1' }, 'app_uninstalled')).toBe(false);
    const again = secretToken();
    await store.storeInstallation(workspaceInstall('T1', again));
    expect(await store.botToken('T1')).toBe(again);
    expect(await store.remove({ teamId: 'T1' }, 'app_uninstalled')).toBe(true);
    const removed = await rows(
      s.fresh.config,
      "select team_id, payload from audit_events where kind = 'installation.removed' order by seq",
    );
    expect(removed.map((r) => r.team_id)).toEqual(['T1', null, 'T1']);
    expect(String(removed[2]?.payload)).toContain('app_uninstalled');
  });

  it('a dump of the table, or of the whole database, without the key reveals no token', async () => {
    const token = secretToken();
    await store.storeInstallation(workspaceInstall('T1', token));
    const table = JSON.stringify(await rows(s.fresh.config, 'select * from slack_installations'));
    expect(table).toContain('T1');
    expect(table).not.toContain(token);
    expect(table).not.toContain(token.slice(5));
    expect(table).not.toContain('xoxp-user');
    if (s.fresh.config.kind === 'sqlite') {
      const folder = dirname(s.fresh.config.path);
      const bytes = readdirSync(folder).map((file) => readFileSync(`${folder}/${file}`).toString('latin1'));
      expect(bytes.join('')).toContain('slack_installations');
      expect(bytes.join('')).not.toContain(token.slice(5));
    }
  });

  it('a value sealed with the previous key reads, and rotate-token-key seals it again with the current one', async () => {
    const token = secretToken();
    await withKeys(OLD_KEY).storeInstallation(workspaceInstall('T1', token));
    await withKeys(OLD_KEY).storeInstallation(orgInstall('E1', secretToken()));
    // The new key alone cannot read it: it is refused, never guessed.
    await expect(withKeys(NEW_KEY).botToken('T1')).rejects.toMatchObject({
      code: 'slack.installation_unreadable',
    });
    expect(await withKeys(NEW_KEY, OLD_KEY).botToken('T1')).toBe(token);
    const before = await rows(s.fresh.config, 'select sealed from slack_installations order by id');
    const cipher = createTokenCipher({ current: NEW_KEY, previous: OLD_KEY });
    expect(await rotateTokenKey(s.stores.installations, cipher, clock)).toEqual({
      rewritten: 2,
      current: 0,
      unreadable: [],
    });
    const after = await rows(s.fresh.config, 'select sealed from slack_installations order by id');
    expect(after).not.toEqual(before);
    for (const row of after) expect(String(row.sealed)).toContain(`:${cipher.currentKeyId}:`);
    // Once rotated, the previous key is no longer needed.
    expect(await withKeys(NEW_KEY).botToken('T1')).toBe(token);
    expect(await rotateTokenKey(s.stores.installations, cipher, clock)).toEqual({
      rewritten: 0,
      current: 2,
      unreadable: [],
    });
  });

  it('a tampered value, or one moved onto another installation, is refused clearly', async () => {
    await store.storeInstallation(workspaceInstall('T1', secretToken()));
    await store.storeInstallation(workspaceInstall('T2', secretToken()));
    const [t1] = await s.stores.installations.all();
    if (!t1) throw new Error('no installation');
    // One character of the middle changed: every bit of it is data (near the end, base64's last character may
    // carry unused bits, and changing only those changes nothing).
    const at = [...t1.sealed].findIndex((c, i) => i >= t1.sealed.length / 2 && /[A-Za-z0-9]/.test(c));
    const flipped = `${t1.sealed.slice(0, at)}${t1.sealed[at] === 'A' ? 'B' : 'A'}${t1.sealed.slice(at + 1)}`;
    expect(await s.stores.installations.reseal(t1.id, t1.sealed, flipped, Date.now())).toBe(true);
    const tampered = await store.botToken('T1').catch((error: unknown) => error);
    expect(tampered).toBeInstanceOf(AppError);
    expect(String(tampered)).toMatch(/T:T1 cannot be read \(it was changed after it was encrypted/);
    // T2's own sealed value copied onto T1's row does not open there either.
    const t2 = (await s.stores.installations.all()).find((row) => row.id === 'T:T2');
    await s.stores.installations.reseal('T:T1', flipped, t2?.sealed ?? '', Date.now());
    await expect(store.botToken('T1')).rejects.toMatchObject({ code: 'slack.installation_unreadable' });
    const cipher = createTokenCipher({ current: NEW_KEY });
    const report = await rotateTokenKey(s.stores.installations, cipher, clock);
    expect(report.unreadable).toEqual([{ id: 'T:T1', reason: 'tampered' }]);
  });
});

describe('npm run db -- rotate-token-key', () => {
  let s: TestStores;
  beforeEach(async () => {
    s = await openTestStores('sqlite');
  });
  afterEach(async () => s.close());

  it('re-encrypts with TOKEN_ENCRYPTION_KEY what TOKEN_ENCRYPTION_KEY_PREVIOUS sealed, and says when the old key can go', async () => {
    const token = secretToken();
    const clock = { now: () => Date.now() };
    const old = createSealedInstallations(
      s.stores.installations,
      createTokenCipher({ current: OLD_KEY }),
      clock,
    );
    await old.storeInstallation(workspaceInstall('T1', token));
    const env = {
      ...s.fresh.env,
      SLACK_CLIENT_ID: '1.2',
      SLACK_CLIENT_SECRET: 'client-secret',
      SLACK_STATE_SECRET: 'x'.repeat(32),
      TOKEN_ENCRYPTION_KEY: NEW_KEY.toString('base64'),
      TOKEN_ENCRYPTION_KEY_PREVIOUS: OLD_KEY.toString('base64'),
    };
    const out: string[] = [];
    const err: string[] = [];
    const io = { out: (line: string) => out.push(line), err: (line: string) => err.push(line) };
    expect(await runDbCli(['rotate-token-key'], env, io)).toBe(0);
    expect(out.join('\n')).toMatch(/Sealed again with the current key \(\w+\): 1; already on it: 0\./);
    expect(out.join('\n')).toContain('TOKEN_ENCRYPTION_KEY_PREVIOUS can be unset');
    const current = createSealedInstallations(
      s.stores.installations,
      createTokenCipher({ current: NEW_KEY }),
      clock,
    );
    expect(await current.botToken('T1')).toBe(token);
    const { TOKEN_ENCRYPTION_KEY_PREVIOUS: _, ...withoutOld } = env;
    expect(await runDbCli(['rotate-token-key'], withoutOld, io)).toBe(0);
    expect(out.at(-2)).toMatch(/: 0; already on it: 1\./);
    expect(await runDbCli(['rotate-token-key'], { ...s.fresh.env }, io)).toBe(2);
    expect(err.join('\n')).toContain('no tokens are stored here');
  });
});
