import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BOT_SCOPES } from '../../src/slack/installations/bot-scopes.js';

describe('the scopes an install asks for', () => {
  it('are the bot scopes of manifest.yml, in its order', () => {
    const manifest = readFileSync(new URL('../../manifest.yml', import.meta.url), 'utf8');
    const bot = manifest.split('    bot:\n')[1]?.split('    user:')[0] ?? '';
    const scopes = [...bot.matchAll(/^\s+- ([a-z:_.]+)/gm)].map((m) => m[1]);
    expect(scopes.length).toBeGreaterThan(5);
    expect([...BOT_SCOPES]).toEqual(scopes);
  });
});
