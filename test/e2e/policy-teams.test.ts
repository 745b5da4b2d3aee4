import { afterEach, describe, expect, it } from 'vitest';
import { policyFromText } from '../../src/approvals/policy-source.js';
import { toolNames } from '../../src/tools/built-in-tools.js';
import { signInWithLink } from '../support/console-client.js';
import { reply } from '../support/fake-openai.js';
import { waitUntil } from '../support/wait.js';
import type { Harness } from './harness.js';
import { query, startPolicyHarness } from './policy-support.js';

/** Notes need a decision everywhere but in T2SALES, whose section of the file waives it. */
const POLICY = {
  tools: { create_note: { approvers: ['conversation', 'admins'] } },
  teams: { T2SALES: { tools: { create_note: { requireApproval: false } } } },
};

interface PolicyApi {
  team: string | null;
  summary: string;
  tools: { tool: string; approval: string }[];
}

describe('approval policy per workspace', () => {
  let h: Harness;
  afterEach(async () => {
    await h?.close();
  });

  /**
   * The model asks to create a note in a thread of `teamId`'s workspace; its answer once the note is made is
   * queued now when the call runs at once (the model's replies are taken in order).
   */
  async function askForNote(teamId: string, text: string, runsAtOnce = false): Promise<void> {
    h.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text } }]));
    if (runsAtOnce) h.model.enqueue(reply.text(`Noted ${text}.`));
    await h.mention(`note ${text}`, { user: 'U1', teamId, channel: `C${teamId}` });
  }

  const notes = async () =>
    (await query(h.database, 'SELECT text FROM notes ORDER BY text')).map((r) => r.text);

  it('the same tool waits for a decision in T1 and runs at once in T2SALES; a reloaded file changes that', async () => {
    h = await startPolicyHarness(POLICY);
    await askForNote('T1ENG', 'one');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    expect(card.params.channel).toBe('CT1ENG');
    expect(await notes()).toEqual([]);

    await askForNote('T2SALES', 'two', true);
    await h.waitForText((t) => t === 'Noted two.');
    expect(await notes()).toEqual(['two']);
    expect(h.cards()).toHaveLength(1);
    expect(await query(h.database, 'SELECT team_id, status FROM approvals')).toEqual([
      { team_id: 'T1ENG', status: 'pending' },
    ]);

    h.model.enqueue(reply.text('Noted one.'));
    expect((await h.click(card, 'approve', 'U2', 'T1ENG')).status).toBe(200);
    await h.waitForText((t) => t === 'Noted one.');
    expect(await notes()).toEqual(['one', 'two']);

    // The file without the workspace's section, reloaded: T2SALES's notes wait for a decision too.
    const reloaded = policyFromText('policy.json', JSON.stringify({ tools: POLICY.tools }), toolNames());
    if (!reloaded.ok) throw new Error(reloaded.problems.join('\n'));
    await h.bot.reloadPolicy(reloaded.policy, reloaded.text);
    await askForNote('T2SALES', 'three');
    const [, second] = await h.waitForCards(2);
    expect(second?.params.channel).toBe('CT2SALES');
    await waitUntil(
      async () =>
        (await query(h.database, "SELECT id FROM approvals WHERE team_id = 'T2SALES'")).length === 1,
    );
    expect(await notes()).toEqual(['one', 'two']);
  });

  it("the console shows an admin the rules of their own workspace, naming no other workspace's", async () => {
    h = await startPolicyHarness(POLICY);
    const origin = new URL(h.url).origin;
    const env = { DATABASE_PATH: h.dbPath, ADMIN_USER_IDS: 'UADMIN' };
    const policyOf = async (team: string) => {
      const client = await signInWithLink(origin, env, 'UADMIN', team);
      return (await (await client.get('/console/api/policy')).json()) as PolicyApi;
    };
    const approvalOf = (api: PolicyApi) => api.tools.find((row) => row.tool === 'create_note')?.approval;
    const sales = await policyOf('T2SALES');
    expect([sales.team, approvalOf(sales)]).toEqual(['T2SALES', 'not required']);
    expect(sales.summary).toContain('create_note: no approval');
    const own = await policyOf('T1ENG');
    expect([own.team, approvalOf(own)]).toEqual([null, 'required']);
    expect(own.summary).not.toContain('T2SALES');
  });
});
