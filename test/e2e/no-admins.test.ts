import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runPolicyCli } from '../../src/cli/policy-cli.js';
import { NOBODY_CAN_DECIDE } from '../../src/slack/blocks/approval-card.js';
import { reply } from '../support/fake-openai.js';
import type { SlackCall } from '../support/fake-slack.js';
import { type Harness, startHarness } from './harness.js';

const saysNobody = (card: SlackCall) =>
  JSON.stringify(card.params.blocks).includes('Nobody can decide this request');

/**
 * `.env.example` ships `ADMIN_USER_IDS` empty. Requests only admins may decide would then wait forever while the
 * card said "It can be decided by admins": the card says nobody can, and how to fix it, and so does
 * `npm run policy -- check`.
 */
describe('with no admins configured', () => {
  let h: Harness | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('a card only admins may decide says that nobody can yet and how to fix it; other cards do not', async () => {
    h = await startHarness({ env: { ADMIN_USER_IDS: '' } });
    h.model.enqueue(reply.toolCalls([{ name: 'delete_note', arguments: { id: 1 } }]));
    await h.mention('delete note 1');
    const [adminOnly] = await h.waitForCards(1);
    if (!adminOnly) throw new Error('no card');
    expect(saysNobody(adminOnly)).toBe(true);
    expect(JSON.stringify(adminOnly.params.blocks)).toContain(JSON.stringify(NOBODY_CAN_DECIDE).slice(1, -1));

    h.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: 'hello' } }]));
    await h.mention('note hello');
    const cards = await h.waitForCards(2);
    const open = cards.find((card) => card !== adminOnly);
    if (!open) throw new Error('no second card');
    expect(saysNobody(open)).toBe(false);
  });

  it('with an admin, the same card is decidable and says nothing of the kind', async () => {
    h = await startHarness({ env: { ADMIN_USER_IDS: 'UADMIN' } });
    h.model.enqueue(reply.toolCalls([{ name: 'delete_note', arguments: { id: 1 } }]));
    await h.mention('delete note 1');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    expect(saysNobody(card)).toBe(false);
  });

  it('npm run policy -- check warns about the tools nobody could decide', async () => {
    dir = mkdtempSync(join(tmpdir(), 'no-admins-'));
    const file = join(dir, 'policy.json');
    writeFileSync(file, JSON.stringify({ tools: { create_note: { approvers: ['admins'] } } }));
    const check = async (env: Record<string, string>) => {
      const run = { code: -1, out: [] as string[], err: [] as string[] };
      run.code = await runPolicyCli(['check', file], {
        out: (line) => run.out.push(line),
        err: (line) => run.err.push(line),
        env: { DATABASE_PATH: join(dir ?? '', 'bot.db'), ...env },
      });
      return run;
    };
    const none = await check({ ADMIN_USER_IDS: '' });
    expect(none.code).toBe(0);
    expect(none.err.join('\n')).toContain(
      'Warning: ADMIN_USER_IDS is empty, so nobody can decide requests to run create_note, delete_note, post_message (only admins may)',
    );
    const some = await check({ ADMIN_USER_IDS: 'UADMIN' });
    expect(some.code).toBe(0);
    expect(some.err).toEqual([]);
  });
});
