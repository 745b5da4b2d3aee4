import { afterEach, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import { eventEnvelope, postEvent } from '../support/slack-requests.js';
import { waitUntil } from '../support/wait.js';
import { execute } from './db-rows.js';
import { editWithModal } from './decision-modals.js';
import { approvalIdOf, type Harness, SECRET } from './harness.js';
import { blocksText, query, startPolicyHarness } from './policy-support.js';

const POLICY = {
  tools: {
    create_note: { risk: 'high', preview: 'Saves a note: {{args.text}}' },
    delete_note: { risk: 'critical' },
    post_message: { risk: 'low' },
  },
};

describe('approval policy: risk, previews and edits as a diff', () => {
  let h: Harness;
  afterEach(async () => {
    await h?.close();
  });

  async function auditPayload(kind: string, approvalId: string): Promise<Record<string, unknown>> {
    const found = await query(h.database, `SELECT payload FROM audit_events WHERE kind = '${kind}'`);
    const payloads = found.map((row) => JSON.parse(String(row.payload)) as Record<string, unknown>);
    const ids = await query(h.database, `SELECT approval_id FROM audit_events WHERE kind = '${kind}'`);
    const index = ids.findIndex((row) => row.approval_id === approvalId);
    return payloads[index] ?? {};
  }

  it('cards show the risk and the preview, stored and audited; App Home puts the riskiest first', async () => {
    h = await startPolicyHarness(POLICY);
    await execute(
      h.database,
      "INSERT INTO notes (team_id, text, created_by, created_at) VALUES ('T1', 'quarterly <!here> numbers', 'U1', 1)",
    );
    const [{ id: noteId } = { id: 0 }] = await query(h.database, 'SELECT id FROM notes');
    h.model.enqueue(
      reply.toolCalls([
        { name: 'post_message', arguments: { channel: 'C0NEWS', text: 'Hello <@U0BOSS> and <!channel>' } },
        { name: 'create_note', arguments: { text: 'ping <!channel> & co' } },
        { name: 'delete_note', arguments: { id: Number(noteId) } },
      ]),
      reply.text('Done.'),
    );
    await h.mention('tidy up', { user: 'U1' });
    const cards = await h.waitForCards(3);
    const [post, create, remove] = ['post_message', 'create_note', 'delete_note'].map((tool) => {
      const card = cards.find((c) => blocksText(c).includes(`\`${tool}\``));
      if (!card) throw new Error(`no card for ${tool}`);
      return card;
    });
    if (!post || !create || !remove) throw new Error('cards missing');
    expect(blocksText(post)).toContain(':large_green_circle: Low risk');
    expect(blocksText(post)).toContain(
      'Posts to <#C0NEWS> as the bot:\\n>Hello &lt;@U0BOSS&gt; and &lt;!channel&gt;',
    );
    expect(blocksText(create)).toContain(
      ':large_orange_circle: *High risk*\\nSaves a note: ping &lt;!channel&gt; &amp; co',
    );
    expect(blocksText(remove)).toContain(
      `:red_circle: *Critical risk*\\nDeletes note #${noteId}: 'quarterly &lt;!here&gt; numbers'`,
    );
    // Stored with the request, so any process shows the same; carried in the audit log.
    const removeId = approvalIdOf(remove);
    const [row] = await query(h.database, `SELECT preview, rule FROM approvals WHERE id = '${removeId}'`);
    expect(row?.preview).toBe(`Deletes note #${noteId}: 'quarterly &lt;!here&gt; numbers'`);
    expect(JSON.parse(String(row?.rule)).risk).toBe('critical');
    expect(await auditPayload('approval.requested', removeId)).toMatchObject({
      risk: 'critical',
      preview: `Deletes note #${noteId}: 'quarterly &lt;!here&gt; numbers'`,
    });

    await postEvent(
      h.url,
      SECRET,
      eventEnvelope({
        type: 'app_home_opened',
        user: 'UADMIN',
        channel: 'D0HOME',
        tab: 'home',
        event_ts: '1.1',
      }),
    );
    const home = await h.slack.waitForCall('views.publish', (c) => c.params.user_id === 'UADMIN');
    const view = home.params.view as { blocks: { block_id?: string }[] };
    const order = view.blocks
      .map((b) => b.block_id ?? '')
      .filter((id) => id.startsWith('pending-apr'))
      .map((id) => id.slice('pending-'.length));
    expect(order).toEqual([removeId, approvalIdOf(create), approvalIdOf(post)]);
  });

  it('an edit shows what changed on the card and in approval.edited, redacted', async () => {
    h = await startPolicyHarness(POLICY);
    h.model.enqueue(
      reply.toolCalls([{ name: 'post_message', arguments: { channel: 'C0NEWS', text: 'Hi all' } }]),
      reply.text('Posted.'),
    );
    await h.mention('announce', { user: 'U1' });
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    const edited = await editWithModal(h, card, 'UADMIN', '{"channel":"C0OTHER","text":"Hi all"}');
    expect(edited.status).toBe(200);
    await h.waitForText((t) => t === 'Posted.');
    const updates = h.slack.callsTo('chat.update');
    await waitUntil(() => updates.some((u) => blocksText(u).includes('changes-')));
    const update = h.slack.callsTo('chat.update').find((u) => blocksText(u).includes('changes-'));
    expect(blocksText(update ?? card)).toContain('channel: \\"C0NEWS\\" → \\"C0OTHER\\"');
    expect(await auditPayload('approval.edited', approvalIdOf(card))).toMatchObject({
      risk: 'low',
      changes: [{ path: 'channel', kind: 'changed', old: 'C0NEWS', new: 'C0OTHER' }],
    });
  });
});
