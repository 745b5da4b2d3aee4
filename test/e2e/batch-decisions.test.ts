import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NOTHING_SELECTED } from '../../src/slack/batch-selection.js';
import { ACTION_IDS, CALLBACK_IDS } from '../../src/slack/ids.js';
import { seedApprovals } from '../support/audit-seed.js';
import { reply } from '../support/fake-openai.js';
import type { SlackCall } from '../support/fake-slack.js';
import { eventEnvelope, postEvent } from '../support/slack-requests.js';
import { waitUntil } from '../support/wait.js';
import { rows } from './db-rows.js';
import { submitModal } from './decision-modals.js';
import { approvalIdOf, cardTs, type Harness, SECRET, startHarness } from './harness.js';
import { clickHomeBatch, slowVotes } from './home-clicks.js';

const ADMIN = 'UADMIN';

describe('batch decisions in App Home', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness({ env: { ADMIN_USER_IDS: ADMIN } });
  });
  afterEach(async () => {
    await h.close();
  });

  /** Two runs, each paused on a create_note card; both answer `Done.` once decided. */
  async function twoCards(): Promise<SlackCall[]> {
    for (const text of ['first', 'second']) {
      h.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text } }]));
      await h.mention(`note: ${text}`);
      await h.waitForCards(text === 'first' ? 1 : 2);
    }
    h.model.enqueue(reply.text('Done.'), reply.text('Done.'));
    return h.cards();
  }

  const clickBatch = (action: 'batchApprove' | 'batchReject', selected: string[], user = ADMIN) =>
    clickHomeBatch(h, action, selected, user);
  const dmTo = (user: string, n = 1) =>
    waitUntil(() => h.slack.callsTo('chat.postMessage').filter((c) => c.params.channel === user)[n - 1], {
      message: `expected direct message ${n} to ${user}`,
    });
  const decisions = async () =>
    (await rows(h.dbPath, 'select kind, actor, payload from audit_events order by seq')).filter((e) =>
      ['approval.approved', 'approval.rejected', 'approval.refused'].includes(String(e.kind)),
    );
  const bothDone = () =>
    waitUntil(() => h.texts().filter((t) => t === 'Done.').length === 2 || undefined, {
      message: 'expected both runs to answer',
    });

  it('Home offers a checkbox per request the person may decide, and the batch buttons', async () => {
    const [card1, card2] = await twoCards();
    const [other] = await seedApprovals(h.database, { approvers: ['U0BOSS'] });
    await postEvent(
      h.url,
      SECRET,
      eventEnvelope({
        type: 'app_home_opened',
        user: ADMIN,
        channel: 'D0HOME',
        tab: 'home',
        event_ts: '1.1',
      }),
    );
    const publish = await h.slack.waitForCall('views.publish');
    const blocks = JSON.stringify(publish.params.view);
    expect(blocks).toContain(`"action_id":"${ACTION_IDS.batchApprove}"`);
    expect(blocks).toContain(`"action_id":"${ACTION_IDS.batchReject}"`);
    const ticks =
      blocks.match(/"action_id":"approval:select","options":\[\{[^\]]*"value":"(apr_\w+)"/g) ?? [];
    expect(ticks.join()).toContain(approvalIdOf(card1 as SlackCall));
    expect(ticks.join()).toContain(approvalIdOf(card2 as SlackCall));
    expect(ticks.join()).not.toContain(String(other));
    expect(ticks).toHaveLength(2);
  });

  it('select two and approve: each is its own decision, the cards are updated, both runs answer; one the person may not decide is skipped with the reason', async () => {
    const cards = await twoCards();
    const [other] = await seedApprovals(h.database, { toolName: 'delete_note', approvers: ['U0BOSS'] });
    const ids = cards.map(approvalIdOf);
    expect((await clickBatch('batchApprove', [...ids, String(other)])).status).toBe(200);

    const dm = await dmTo(ADMIN);
    expect(String(dm.params.text)).toContain('Approved 2 requests.');
    expect(String(dm.params.text)).toContain('Skipped 1:');
    expect(String(dm.params.text)).toContain(
      `${other}: You cannot decide this request. It can be decided by <@U0BOSS>`,
    );
    for (const card of cards) {
      const update = await h.slack.waitForCall('chat.update', (c) => c.params.ts === cardTs(card));
      expect(JSON.stringify(update.params.blocks)).toContain(`Approved by <@${ADMIN}>`);
    }
    await bothDone();
    const audit = await decisions();
    expect(audit.map((e) => e.kind).sort()).toEqual([
      'approval.approved',
      'approval.approved',
      'approval.refused',
    ]);
    for (const event of audit.filter((e) => e.kind === 'approval.approved')) {
      expect(event.actor).toBe(ADMIN);
      expect(JSON.parse(String(event.payload)).batch).toBe(true);
    }
    const [still] = await rows(h.dbPath, `select status from approvals where id = '${other}'`);
    expect(still?.status).toBe('pending');
  });

  it('Reject selected asks for one reason in a form; every request is rejected with it and each run reads it', async () => {
    const cards = await twoCards();
    const ids = cards.map(approvalIdOf);
    await clickBatch('batchReject', ids);
    const opened = await h.slack.waitForCall('views.open');
    const view = opened.params.view as { private_metadata: string; callback_id: string };
    expect(view.callback_id).toBe(CALLBACK_IDS.batchRejectModal);
    expect(h.slack.callsTo('chat.update')).toHaveLength(0);
    const submitted = await submitModal(
      h,
      { privateMetadata: view.private_metadata, callbackId: view.callback_id },
      ADMIN,
      { reason: { reason_input: { type: 'plain_text_input', value: 'not this week' } } },
    );
    expect(submitted.status).toBe(200);
    for (const card of cards) {
      const update = await h.slack.waitForCall('chat.update', (c) => c.params.ts === cardTs(card));
      expect(JSON.stringify(update.params.blocks)).toContain(`Rejected by <@${ADMIN}>`);
    }
    expect(String((await dmTo(ADMIN)).params.text)).toBe('Rejected 2 requests.');
    await bothDone();
    const outputs = h.model.requests.flatMap((r) => r.messages.filter((m) => m.role === 'tool'));
    expect(outputs.filter((m) => String(m.content).includes('not this week'))).toHaveLength(2);
    const audit = await decisions();
    expect(audit.map((e) => JSON.parse(String(e.payload)).reason)).toEqual([
      'not this week',
      'not this week',
    ]);
  });

  it('Approve selected and the Reject selected form answer Slack only once every request is decided: nothing acknowledged is left to a process that may die', async () => {
    const answered = { now: false };
    const committedBeforeTheAnswer: boolean[] = [];
    await h.close();
    h = await startHarness({
      env: { ADMIN_USER_IDS: ADMIN },
      // A slow database: each vote commits 100 ms after it is asked for.
      overrides: { stores: slowVotes(100, () => committedBeforeTheAnswer.push(!answered.now)) },
    });
    const first = (await twoCards()).map(approvalIdOf);
    const approved = await clickBatch('batchApprove', first);
    answered.now = true;
    expect(approved.status).toBe(200);
    expect(committedBeforeTheAnswer).toEqual([true, true]);
    await bothDone();

    answered.now = false;
    h.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: 'third' } }]));
    await h.mention('note: third');
    const [third] = (await h.waitForCards(3)).slice(2).map(approvalIdOf);
    if (!third) throw new Error('no third card');
    h.model.enqueue(reply.text('Done.'));
    await clickBatch('batchReject', [third]);
    const view = (await h.slack.waitForCall('views.open')).params.view as {
      private_metadata: string;
      callback_id: string;
    };
    const submitted = await submitModal(
      h,
      { privateMetadata: view.private_metadata, callbackId: view.callback_id },
      ADMIN,
      { reason: { reason_input: { type: 'plain_text_input', value: 'no' } } },
    );
    answered.now = true;
    expect(submitted.status).toBe(200);
    expect(committedBeforeTheAnswer).toEqual([true, true, true]);
  });

  it('a batch button with nothing ticked changes nothing and says so', async () => {
    const cards = await twoCards();
    await clickBatch('batchApprove', []);
    expect(String((await dmTo(ADMIN)).params.text)).toBe(NOTHING_SELECTED);
    await clickBatch('batchReject', []);
    expect(String((await dmTo(ADMIN, 2)).params.text)).toBe(NOTHING_SELECTED);
    expect(h.slack.callsTo('views.open')).toHaveLength(0);
    expect(await decisions()).toEqual([]);
    expect(cards).toHaveLength(2);
  });

  it('someone who may decide neither request gets both skipped, and nothing changes', async () => {
    const cards = await twoCards();
    await clickBatch('batchApprove', cards.map(approvalIdOf), 'U0NOBODY');
    const text = String((await dmTo('U0NOBODY')).params.text);
    expect(text).toContain('Approved 0 requests.');
    expect(text.match(/You cannot decide this request/g)).toHaveLength(2);
    expect((await decisions()).map((e) => e.kind)).toEqual(['approval.refused', 'approval.refused']);
    expect(h.slack.callsTo('chat.update')).toHaveLength(0);
  });
});
