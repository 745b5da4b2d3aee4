import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runAuditCli } from '../../src/cli/audit-cli.js';
import { ACTION_IDS, CALLBACK_IDS } from '../../src/slack/ids.js';
import { reply } from '../support/fake-openai.js';
import type { SlackCall } from '../support/fake-slack.js';
import { blockActionsPayload } from '../support/slack-payloads.js';
import { eventEnvelope, postEvent, postInteraction } from '../support/slack-requests.js';
import { submitModal } from './decision-modals.js';
import { approvalIdOf, cardTs, type Harness, SECRET } from './harness.js';
import { blocksText, query, startPolicyHarness } from './policy-support.js';

const ADMIN = 'UADMIN';
const OTHER_ADMIN = 'UADMIN2';
const WHY = 'Production is down and the on-call approver is unreachable.';

describe('break glass', () => {
  let h: Harness;

  beforeEach(async () => {
    h = await startPolicyHarness(
      {
        tools: {
          create_note: { approvers: ['conversation', 'admins'], allowSelfApproval: false },
          delete_note: { breakGlass: false },
        },
      },
      { env: { ADMIN_USER_IDS: `${ADMIN},${OTHER_ADMIN}` } },
    );
  });
  afterEach(async () => {
    await h.close();
  });

  const homeOf = async (user: string) => {
    const before = h.slack.callsTo('views.publish').length;
    await postEvent(
      h.url,
      SECRET,
      eventEnvelope({
        type: 'app_home_opened',
        user,
        channel: 'D0HOME',
        tab: 'home',
        event_ts: '1700000000.000100',
      }),
    );
    const call = await h.slack.waitForCall(
      'views.publish',
      (c) => c.params.user_id === user && h.slack.callsTo('views.publish').indexOf(c) >= before,
    );
    return JSON.stringify(call.params.view);
  };
  /** A click in App Home (or in a direct message, with `channelId`): the verified clicker and the button value. */
  const clickAs = (
    user: string,
    actionId: string,
    value: string,
    where?: { channelId: string; messageTs: string },
  ) => {
    const payload = blockActionsPayload({
      userId: user,
      channelId: where?.channelId ?? 'unused',
      messageTs: where?.messageTs ?? 'unused',
      actionId,
      value,
    });
    if (where) return postInteraction(h.url, SECRET, payload);
    const { channel: _c, message: _m, ...home } = payload;
    return postInteraction(h.url, SECRET, {
      ...home,
      container: { type: 'view', view_id: 'VHOME' },
      view: { id: 'VHOME', type: 'home', blocks: [] },
    });
  };
  const dmTo = (user: string, text: string) =>
    h.slack.waitForCall(
      'chat.postMessage',
      (c) => c.params.channel === user && String(c.params.text).includes(text),
    );
  const events = (kind: string) =>
    query(h.database, `select actor, payload from audit_events where kind = '${kind}' order by seq`);
  const cli = async (...argv: string[]) => {
    const run = { code: 0, out: [] as string[], err: [] as string[] };
    run.code = await runAuditCli(
      argv,
      { DATABASE_PATH: h.dbPath },
      { out: (line) => run.out.push(line), err: (line) => run.err.push(line), now: () => Date.now() },
    );
    return run;
  };
  const pause = async (tool: string, args: Record<string, unknown>, user: string): Promise<SlackCall> => {
    h.model.enqueue(reply.toolCalls([{ name: tool, arguments: args }]), reply.text('Done.'));
    await h.mention(`please ${tool}`, { user });
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    return card;
  };

  it('an admin approves their own request with a justification; another admin acknowledges it, they cannot', async () => {
    const card = await pause('create_note', { text: 'hotfix' }, ADMIN);
    const id = approvalIdOf(card);
    // The ordinary way is refused, and App Home offers the way out to this admin only.
    await h.click(card, 'approve', ADMIN);
    await h.slack.waitForCall('chat.postEphemeral', (c) =>
      String(c.params.text).includes('You asked for this'),
    );
    expect(await homeOf(ADMIN)).toContain(
      `"action_id":"${ACTION_IDS.breakGlass}","text":{"type":"plain_text","text":"Break glass…"},"value":"${id}"`,
    );
    expect(await homeOf('U0PLAIN')).not.toContain(ACTION_IDS.breakGlass);

    expect((await clickAs(ADMIN, ACTION_IDS.breakGlass, id)).status).toBe(200);
    const opened = await h.slack.waitForCall('views.open');
    const view = opened.params.view as { private_metadata: string; callback_id: string };
    expect(view.callback_id).toBe(CALLBACK_IDS.breakGlassModal);
    const modal = { privateMetadata: view.private_metadata, callbackId: view.callback_id };
    const justify = (value: string) =>
      submitModal(h, modal, ADMIN, {
        justification: { justification_input: { type: 'plain_text_input', value } },
      });
    // Too short to be an account of anything: refused in the form, nothing decided.
    expect((await justify('urgent')).body).toMatchObject({ response_action: 'errors' });
    expect(await events('approval.break_glass')).toHaveLength(0);

    expect((await justify(WHY)).status).toBe(200);
    const update = await h.slack.waitForCall('chat.update', (c) => c.params.ts === cardTs(card));
    expect(blocksText(update)).toContain(`Approved by <@${ADMIN}>`);
    expect(blocksText(update)).toContain(`*Break glass*: <@${ADMIN}> approved`);
    expect(blocksText(update)).toContain(WHY);
    await h.waitForText((text) => text === 'Done.');
    const [approved] = await events('approval.approved');
    expect(JSON.parse(String(approved?.payload))).toMatchObject({ breakGlass: true });
    const [broken] = await events('approval.break_glass');
    expect(broken?.actor).toBe(ADMIN);
    expect(JSON.parse(String(broken?.payload))).toMatchObject({
      justification: WHY,
      overrides: 'self_approval',
    });
    expect(await homeOf(ADMIN)).toContain(`break glass by <@${ADMIN}> (not yet acknowledged)`);

    // The review card goes to the other admin, never to the one who broke glass.
    const review = await dmTo(OTHER_ADMIN, 'Break glass');
    expect(blocksText(review)).toContain(ACTION_IDS.acknowledgeBreakGlass);
    expect(
      h.slack
        .callsTo('chat.postMessage')
        .some((c) => c.params.channel === ADMIN && String(c.params.text).startsWith('Break glass')),
    ).toBe(false);
    const listed = await cli('break-glass');
    expect(listed.code).toBe(1);
    expect(listed.out.join('\n')).toContain(id);
    expect(listed.out.join('\n')).toContain(WHY);

    // Slack names the direct message by its own channel id, not the user's.
    const reviewCard = { channelId: 'D0REVIEW', messageTs: cardTs(review) };
    await clickAs(ADMIN, ACTION_IDS.acknowledgeBreakGlass, id, reviewCard);
    await h.slack.waitForCall('chat.postEphemeral', (c) =>
      String(c.params.text).includes('another admin must acknowledge'),
    );
    expect(await events('approval.break_glass_acknowledged')).toHaveLength(0);

    await clickAs(OTHER_ADMIN, ACTION_IDS.acknowledgeBreakGlass, id, reviewCard);
    const acknowledged = await h.slack.waitForCall(
      'chat.update',
      (c) => c.params.ts === reviewCard.messageTs,
    );
    expect(blocksText(acknowledged)).toContain(`Acknowledged by <@${OTHER_ADMIN}>`);
    const [ack] = await events('approval.break_glass_acknowledged');
    expect(ack?.actor).toBe(OTHER_ADMIN);
    expect(JSON.parse(String(ack?.payload))).toMatchObject({ brokenBy: ADMIN });
    const after = await cli('break-glass');
    expect(after.code).toBe(0);
    expect(after.out).toEqual(['No unacknowledged break-glass approvals.']);
    expect(await homeOf(ADMIN)).toContain(`break glass by <@${ADMIN}> (acknowledged by <@${OTHER_ADMIN}>)`);
  });

  it('a non-admin is refused as for Approve, and nothing is decided', async () => {
    const card = await pause('create_note', { text: 'x' }, 'U0ASKER');
    const id = approvalIdOf(card);
    await clickAs('U0PLAIN', ACTION_IDS.breakGlass, id);
    await dmTo(
      'U0PLAIN',
      'You cannot decide this request. It can be decided by anyone in the conversation or admins.',
    );
    expect(h.slack.callsTo('views.open')).toHaveLength(0);
    const [refused] = await events('approval.refused');
    expect(JSON.parse(String(refused?.payload))).toMatchObject({
      breakGlass: true,
      reason: 'not_an_approver',
    });
    expect(await query(h.database, `select status from approvals where id = '${id}'`)).toEqual([
      { status: 'pending' },
    ]);
  });

  it('a tool whose policy says "breakGlass": false cannot be approved that way', async () => {
    const card = await pause('delete_note', { id: 1 }, ADMIN);
    const id = approvalIdOf(card);
    expect(await homeOf(ADMIN)).not.toContain(ACTION_IDS.breakGlass);
    await clickAs(ADMIN, ACTION_IDS.breakGlass, id);
    await dmTo(ADMIN, 'The policy forbids breaking glass on delete_note requests.');
    expect(h.slack.callsTo('views.open')).toHaveLength(0);
    const [refused] = await events('approval.refused');
    expect(JSON.parse(String(refused?.payload))).toMatchObject({ reason: 'break_glass_forbidden' });
    expect(await query(h.database, `select status from approvals where id = '${id}'`)).toEqual([
      { status: 'pending' },
    ]);
  });
});
