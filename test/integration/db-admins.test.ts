import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runDbCli } from '../../src/cli/db-cli.js';
import { oauthEnv } from '../support/oauth-installs.js';
import { openTestStores, type TestStores } from '../support/test-database.js';

/** `npm run db -- admins` on Enterprise Grid: the organisation named with --enterprise, never guessed. */
describe('npm run db -- admins with an org-wide install', () => {
  let s: TestStores;
  beforeEach(async () => {
    s = await openTestStores('sqlite');
    await s.stores.installations.save(
      {
        id: 'E:E011',
        teamId: null,
        enterpriseId: 'E011',
        enterpriseInstall: true,
        installerUserId: 'WORGADMIN',
        botUserId: 'UBOT',
        sealed: 'v1:k:iv:sealed',
        installedAt: 1,
        updatedAt: 1,
      },
      [],
    );
  });
  afterEach(async () => s.close());

  const cli = async (...argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const env = { ...oauthEnv(), ...s.fresh.env };
    const code = await runDbCli(['admins', ...argv], env, {
      out: (l) => out.push(l),
      err: (l) => err.push(l),
    });
    return { code, out, err };
  };

  it("lists and changes a workspace's admins with its organisation's installer kept", async () => {
    expect(await cli('--team', 'T022')).toEqual({ code: 0, out: ['T022 has no admin.'], err: [] });
    expect(await cli('--team', 'T022', '--enterprise', 'E011')).toMatchObject({
      code: 0,
      out: ['Admins of T022: WORGADMIN'],
    });
    expect(await cli('--team', 'T022', '--enterprise', 'E011', '--add', 'W2ANN')).toMatchObject({
      code: 0,
      out: ['Admins of T022: WORGADMIN, W2ANN'],
    });
    expect(await cli('--team', 'T022', '--enterprise', 'nope')).toMatchObject({
      code: 2,
      err: ['--enterprise takes a Slack enterprise ID such as E012ABCDEF.'],
    });
  });
});
