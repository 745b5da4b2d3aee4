import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { signInWithLink } from '../../support/console-client.js';
import { reply } from '../../support/fake-openai.js';
import { approvalIdOf, type Harness, startHarness } from '../harness.js';

const ADMIN = 'UADMIN';

describe('web console: a request from inside a nested agent', () => {
  let h: Harness | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await h?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('names the chain of agents that asked, as the card does, in the API and on the page', async () => {
    dir = mkdtempSync(join(tmpdir(), 'agents-'));
    const agents = join(dir, 'agents.json');
    const triage = {
      name: 'triage',
      description: 'Files bugs.',
      instructions: 'File bugs.',
      tools: ['create_note'],
    };
    writeFileSync(agents, JSON.stringify({ agents: [triage] }));
    h = await startHarness({ env: { ADMIN_USER_IDS: ADMIN, AGENTS_FILE: agents } });
    h.model.enqueue(
      reply.toolCalls([{ name: 'triage', arguments: { input: 'Login fails' }, id: 'call_outer' }]),
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'Bug: login fails' }, id: 'n1' }]),
    );
    await h.mention('file this bug: login fails');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    const id = approvalIdOf(card);
    const admin = await signInWithLink(
      new URL(h.url).origin,
      { DATABASE_PATH: h.dbPath, ADMIN_USER_IDS: ADMIN },
      ADMIN,
    );
    const detail = (await (await admin.get(`/console/api/approvals/${id}`)).json()) as {
      tool: string;
      agentChain: string[];
      call: string;
    };
    expect(detail).toMatchObject({
      tool: 'create_note',
      agentChain: ['triage'],
      call: 'triage → create_note',
    });
    expect(await (await admin.get(`/console/approvals/${id}`)).text()).toContain('triage → create_note');
    expect(await (await admin.get('/console')).text()).toContain('triage → create_note');
  });
});
