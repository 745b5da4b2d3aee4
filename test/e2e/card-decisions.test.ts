import { afterEach, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import { rows } from './db-rows.js';
import { editWithModal, openModal, rejectWithModal, submitModal } from './decision-modals.js';
import { approvalIdOf, type Harness, startHarness } from './harness.js';

const toolOutputs = (h: Harness, request: number) =>
  h.model.requests[request]?.messages.filter((m) => m.role === 'tool').map((m) => m.content) ?? [];

describe('the approval card: reject with a reason, approve for this thread, edit then approve', () => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  it('Reject opens a modal; the reason and the decider reach the model and the card', async () => {
    h = await startHarness();
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'draft' } }]),
      reply.text('OK, I will not add it.'),
    );
    await h.mention('add a note draft');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');

    const modal = await openModal(h, card, 'reject', 'U2');
    expect(modal.call.params.trigger_id).toEqual(expect.any(String));
    const tooLong = await submitModal(h, modal, 'U2', {
      reason: { reason_input: { type: 'plain_text_input', value: 'x'.repeat(501) } },
    });
    expect(tooLong.body).toEqual({
      response_action: 'errors',
      errors: { reason: 'Keep the reason under 500 characters.' },
    });
    expect(await rows(h.database, 'SELECT status FROM approvals')).toEqual([{ status: 'pending' }]);

    const done = await submitModal(h, modal, 'U2', {
      reason: { reason_input: { type: 'plain_text_input', value: 'Drafts go in the wiki.' } },
    });
    expect(done).toEqual({ status: 200, body: undefined });
    await h.waitForText((text) => text === 'OK, I will not add it.');
    expect(toolOutputs(h, 1)).toEqual([
      'Tool execution was not approved. Rejected by <@U2>, who said: "Drafts go in the wiki."',
    ]);
    const update = await h.slack.waitForCall('chat.update');
    expect(JSON.stringify(update.params.blocks)).toContain('Rejected by <@U2>');
    expect(JSON.stringify(update.params.blocks)).toContain('Drafts go in the wiki.');
    expect(await rows(h.database, 'SELECT COUNT(*) AS n FROM notes')).toEqual([{ n: 0 }]);
  });

  it('Reject without a reason gives the model exactly the default sentence', async () => {
    h = await startHarness();
    h.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: 'x' } }]), reply.text('fine'));
    await h.mention('add x');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    await rejectWithModal(h, card, 'U2', '   ');
    await h.waitForText((text) => text === 'fine');
    expect(toolOutputs(h, 1)).toEqual(['Tool execution was not approved.']);
  });

  it('Approve for this thread: later calls of the tool run with a note in the thread, recorded as automatic; a per-call Reject still wins', async () => {
    h = await startHarness();
    h.model.enqueue(
      reply.toolCalls([
        { name: 'create_note', arguments: { text: 'one' } },
        { name: 'create_note', arguments: { text: 'two' } },
      ]),
      reply.text('One added, two rejected.'),
    );
    const ts = await h.mention('add one and two');
    const [first, second] = await h.waitForCards(2);
    if (!first || !second) throw new Error('cards missing');
    await h.click(first, 'approve_thread', 'U0TRUSTED');
    const update = await h.slack.waitForCall('chat.update');
    expect(JSON.stringify(update.params.blocks)).toContain('Approved for this thread by <@U0TRUSTED>');
    // The other card of the same turn keeps its own, exact decision.
    await rejectWithModal(h, second, 'U3');
    await h.waitForText((text) => text === 'One added, two rejected.');
    expect(toolOutputs(h, 1)).toEqual(['Created note #1.', 'Tool execution was not approved.']);

    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'three' } }]),
      reply.text('Three added.'),
    );
    await h.message('add three', { threadTs: ts });
    await h.waitForText((text) => text === 'Three added.');
    expect(h.texts()).toContain('`create_note` auto-approved (approved for this thread by <@U0TRUSTED>)');
    expect(h.cards()).toHaveLength(2);
    expect(await rows(h.database, 'SELECT text FROM notes ORDER BY id')).toEqual([
      { text: 'one' },
      { text: 'three' },
    ]);
    const auto = await rows(
      h.database,
      "SELECT status, decided_by, origin_approval_id FROM approvals WHERE arguments LIKE '%three%'",
    );
    expect(auto).toEqual([
      { status: 'executed', decided_by: 'U0TRUSTED', origin_approval_id: approvalIdOf(first) },
    ]);
    const audit = await rows(
      h.database,
      "SELECT actor, payload FROM audit_events WHERE kind = 'approval.approved'",
    );
    expect(audit.map((e) => [e.actor, JSON.parse(String(e.payload)).automatic ?? false])).toEqual([
      ['U0TRUSTED', false],
      ['U0TRUSTED', true],
    ]);

    // Arguments that do not parse always ask a person, standing approval or not.
    h.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: 7 } }]));
    await h.message('add seven', { threadTs: ts });
    await h.waitForCards(3);

    // Another conversation is not covered.
    h.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: 'elsewhere' } }]));
    await h.mention('add elsewhere');
    await h.waitForCards(4);
  });

  it('Approve for this thread is not offered for delete_note, and a forged click is refused', async () => {
    h = await startHarness({ env: { ADMIN_USER_IDS: 'UADMIN' } });
    h.model.enqueue(reply.toolCalls([{ name: 'delete_note', arguments: { id: 1 } }]));
    await h.mention('delete note 1');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    expect(JSON.stringify(card.params.blocks)).not.toContain('approval:approve_thread');
    await h.click(card, 'approve_thread', 'UADMIN');
    const refusal = await h.slack.waitForCall('chat.postEphemeral');
    expect(refusal.params.text).toBe(
      'delete_note cannot be approved for the whole thread; approve this call on its own.',
    );
    expect(await rows(h.database, 'SELECT status FROM approvals')).toEqual([{ status: 'pending' }]);
    expect(await rows(h.database, 'SELECT COUNT(*) AS n FROM standing_approvals')).toEqual([{ n: 0 }]);
  });

  it('Edit: the JSON is checked against the tool schema in the modal; the edited arguments run and the model is told', async () => {
    h = await startHarness();
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'helo wrld' } }]),
      reply.text('Added the corrected note.'),
    );
    await h.mention('add helo wrld');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');

    const notJson = await editWithModal(h, card, 'U2', '{"text": ');
    expect(JSON.stringify(notJson.modal.view)).toContain('helo wrld');
    expect(notJson.body).toEqual({
      response_action: 'errors',
      errors: { arguments: expect.stringContaining('not valid JSON') },
    });
    const wrongType = await submitModal(h, notJson.modal, 'U2', {
      arguments: { arguments_input: { type: 'plain_text_input', value: '{"text": 5}' } },
    });
    expect(wrongType.body).toEqual({
      response_action: 'errors',
      errors: { arguments: expect.stringContaining('The arguments are invalid: text:') },
    });
    expect(await rows(h.database, 'SELECT status FROM approvals')).toEqual([{ status: 'pending' }]);

    const accepted = await submitModal(h, notJson.modal, 'U2', {
      arguments: { arguments_input: { type: 'plain_text_input', value: '{ "text": "hello world" }' } },
    });
    expect(accepted).toEqual({ status: 200, body: undefined });
    await h.waitForText((text) => text === 'Added the corrected note.');
    expect(toolOutputs(h, 1)).toEqual([
      '<@U2> edited the arguments before approving. The tool ran with {"text":"hello world"} instead of {"text":"helo wrld"}. Output: Created note #1.',
    ]);
    expect(await rows(h.database, 'SELECT text FROM notes')).toEqual([{ text: 'hello world' }]);
    expect(
      await rows(h.database, 'SELECT arguments, edited_arguments, status, decided_by FROM approvals'),
    ).toEqual([
      {
        arguments: '{"text":"helo wrld"}',
        edited_arguments: '{"text":"hello world"}',
        status: 'executed',
        decided_by: 'U2',
      },
    ]);
    const update = await h.slack.waitForCall('chat.update');
    expect(JSON.stringify(update.params.blocks)).toContain('with edited arguments');
  });

  it('Edit is a decision like any other: someone who may not decide is told so, and no form opens', async () => {
    h = await startHarness({ env: { ADMIN_USER_IDS: 'UADMIN' } });
    h.model.enqueue(reply.toolCalls([{ name: 'delete_note', arguments: { id: 1 } }]));
    await h.mention('delete note 1');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    expect((await h.click(card, 'edit', 'U2')).status).toBe(200);
    const told = await h.slack.waitForCall('chat.postEphemeral', (c) => c.params.user === 'U2');
    expect(told.params.text).toBe('You cannot decide this request. It can be decided by admins.');
    expect(h.slack.callsTo('views.open')).toHaveLength(0);
    expect(await rows(h.database, 'SELECT status, edited_arguments FROM approvals')).toEqual([
      { status: 'pending', edited_arguments: null },
    ]);
  });
});
