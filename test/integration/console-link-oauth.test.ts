import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { issueLink } from '../support/console-client.js';
import { oauthEnv } from '../support/oauth-installs.js';

describe('npm run console -- link, installed into several workspaces', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('asks for the workspace: a link without --team would open a session that sees nothing', async () => {
    dir = mkdtempSync(join(tmpdir(), 'console-link-'));
    const env = { ...oauthEnv(), DATABASE_PATH: join(dir, 'bot.db'), OPENAI_API_KEY: 'sk-test' };
    const without = await issueLink(env, 'U0123ABCD');
    expect(without.code).toBe(2);
    expect(without.err.join('\n')).toContain('name the workspace with --team');
    const withTeam = await issueLink(env, 'U0123ABCD', 'T0123ABCD');
    expect(withTeam.code).toBe(0);
    expect(withTeam.url).toContain('/console/link/');
  });
});
