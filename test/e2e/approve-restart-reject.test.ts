import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type BotProcess, startBotProcess } from '../support/bot-process.js';
import { type FakeOpenAI, reply, startFakeOpenAI } from '../support/fake-openai.js';
import { type FakeSlack, type SlackCall, startFakeSlack } from '../support/fake-slack.js';
import { isRecord } from '../support/json-value.js';
import { blockActionsPayload, viewSubmissionPayload } from '../support/slack-payloads.js';
import {
  appMentionEvent,
  eventEnvelope,
  messageEvent,
  nextTs,
  postEvent,
  postInteraction,
} from '../support/slack-requests.js';
import { rows } from './db-rows.js';
import { approvalIdOf, cardTs, isApprovalCard, SECRET } from './harness.js';

interface Item {
  kind: string;
  data: Record<string, unknown>;
}

/**
 * The scenario of hitl-semantics.md, in our tools' terms: three turns in one thread (approve, restart the
 * process, approve, reject), with the stored history checked after every turn.
 */
describe('reference scenario: approve, restart, approve, reject in one thread', () => {
  let slack: FakeSlack;
  let model: FakeOpenAI;
  let dir: string;
  let bot: BotProcess | undefined;

  beforeEach(async () => {
    slack = await startFakeSlack();
    model = await startFakeOpenAI();
    dir = mkdtempSync(join(tmpdir(), 'bot-scenario-'));
  });
  afterEach(async () => {
    await bot?.kill();
    await slack.close();
    await model.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const dbPath = () => join(dir, 'bot.db');
  const start = () =>
    startBotProcess({
      env: {
        SLACK_BOT_TOKEN: 'xoxb-scenario',
        SLACK_SIGNING_SECRET: SECRET,
        SLACK_API_URL: slack.url,
        OPENAI_API_KEY: 'sk-scenario',
        OPENAI_BASE_URL: model.baseURL,
        OPENAI_STREAM: 'false',
        DATABASE_PATH: dbPath(),
        ADMIN_USER_IDS: 'UADMIN1',
        LOG_LEVEL: 'warn',
      },
    });
  const events = () => `${bot?.url}/slack/events`;
  /** A thread reply without a mention, as a person continuing the conversation writes it. */
  const replyInThread = (text: string, threadTs: string) =>
    postEvent(
      events(),
      SECRET,
      eventEnvelope(messageEvent({ user: 'U1', channel: 'C1', text, ts: nextTs(), threadTs })),
    );
  const history = async (): Promise<Item[]> =>
    (await rows(dbPath(), 'SELECT kind, data FROM conversation_items ORDER BY id')).map((row) => ({
      kind: String(row.kind),
      data: JSON.parse(String(row.data)),
    }));
  const nthCard = (n: number) =>
    slack.waitForCall(
      'chat.postMessage',
      (call) =>
        isApprovalCard(call) &&
        slack.callsTo('chat.postMessage').filter(isApprovalCard).indexOf(call) === n - 1,
      10_000,
    );
  const answer = (text: string) =>
    slack.waitForCall('chat.postMessage', (call) => call.params.text === text, 10_000);
  const click = (card: SlackCall, action: string, user: string, threadTs: string) =>
    postInteraction(
      events(),
      SECRET,
      blockActionsPayload({
        userId: user,
        channelId: 'C1',
        messageTs: cardTs(card),
        threadTs,
        actionId: action,
        value: approvalIdOf(card),
      }),
    );

  /** After each turn: the user's messages once each, the last call's tool, and its output right after it. */
  const expectHistory = async (userMessages: string[], toolName: string): Promise<Item[]> => {
    const items = await history();
    expect(items.filter((i) => i.kind === 'user_message').map((i) => i.data.text)).toEqual(userMessages);
    const lastCall = items.filter((i) => i.kind === 'tool_call').at(-1);
    const lastOutput = items.filter((i) => i.kind === 'tool_output').at(-1);
    expect(lastCall?.data.name).toBe(toolName);
    expect(lastOutput?.data.callId).toBe(lastCall?.data.callId);
    return items;
  };

  it('keeps the history exact across the three turns and a restart of the process', async () => {
    const threadTs = nextTs();
    const turns = [
      'Fetch profile for customer 104.',
      'Update note for customer 104.',
      'Delete note for customer 104.',
    ];

    // Turn 1: a gated call, approved.
    bot = await start();
    model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'Customer 104: profile fetched' } }]),
      reply.text('Customer 104 profile is saved as note #1.'),
    );
    await postEvent(
      events(),
      SECRET,
      eventEnvelope(
        appMentionEvent({ user: 'U1', channel: 'C1', text: `<@UBOT> ${turns[0]}`, ts: threadTs }),
      ),
    );
    const first = await nthCard(1);
    await click(first, 'approval:approve', 'U2', threadTs);
    await answer('Customer 104 profile is saved as note #1.');
    await expectHistory(turns.slice(0, 1), 'create_note');

    // Restart the process between the turns, as a deploy would.
    expect(await bot.kill('SIGTERM')).toBe(0);
    bot = await start();

    // Turn 2, after the restart, in the same thread without a mention: gated call, approved.
    model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'Customer 104: note updated' } }]),
      reply.text('The note for customer 104 is updated.'),
    );
    await replyInThread(turns[1] ?? '', threadTs);
    const second = await nthCard(2);
    await click(second, 'approval:approve', 'U2', threadTs);
    await answer('The note for customer 104 is updated.');
    await expectHistory(turns.slice(0, 2), 'create_note');

    // Turn 3: a gated call, rejected (without a reason) through the Reject modal.
    model.enqueue(
      reply.toolCalls([{ name: 'delete_note', arguments: { id: 1 } }]),
      reply.text('I did not delete the note: the request was not approved.'),
    );
    await replyInThread(turns[2] ?? '', threadTs);
    const third = await nthCard(3);
    await click(third, 'approval:reject', 'UADMIN1', threadTs);
    const modal = await slack.waitForCall('views.open', undefined, 10_000);
    const view = isRecord(modal.params.view) ? modal.params.view : {};
    const submitted = await postInteraction(
      events(),
      SECRET,
      viewSubmissionPayload({
        userId: 'UADMIN1',
        callbackId: String(view.callback_id),
        privateMetadata: String(view.private_metadata),
        values: { reason: { reason_input: { type: 'plain_text_input', value: null } } },
      }),
    );
    expect(submitted.status).toBe(200);
    await answer('I did not delete the note: the request was not approved.');
    const items = await expectHistory(turns, 'delete_note');
    expect(items.filter((i) => i.kind === 'tool_output').at(-1)?.data.output).toBe(
      'Tool execution was not approved.',
    );

    // The rejected tool did not run; the approved ones ran once each.
    expect(await rows(dbPath(), 'SELECT id, text FROM notes ORDER BY id')).toEqual([
      { id: 1, text: 'Customer 104: profile fetched' },
      { id: 2, text: 'Customer 104: note updated' },
    ]);
    expect(await rows(dbPath(), 'SELECT tool_name, status FROM approvals ORDER BY rowid')).toEqual([
      { tool_name: 'create_note', status: 'executed' },
      { tool_name: 'create_note', status: 'executed' },
      { tool_name: 'delete_note', status: 'rejected' },
    ]);
    // Exactly one model call per step: no hidden calls, nothing re-asked after the restart.
    expect(model.requests).toHaveLength(6);
  });
});
