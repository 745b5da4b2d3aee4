import { statSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import { slackReply } from '../support/fake-slack.js';
import { blockActionsPayload } from '../support/slack-payloads.js';
import { postInteraction } from '../support/slack-requests.js';
import { approvalIdOf, cardTs, type Harness, SECRET, startHarness } from './harness.js';
import { type ProcessFixture, startProcessFixture } from './process-fixture.js';

const BOT_TOKEN = 'xoxb-4242-planted-bot-token-3c9f1a7e';
const API_KEY = 'sk-planted0api0key0d41d8cd98f00b204';

describe('secrets and files of the running bot', () => {
  let f: ProcessFixture;
  beforeEach(async () => {
    f = await startProcessFixture();
  });
  afterEach(async () => {
    await f.close();
  });

  it('never writes tokens or secrets to its output, even at debug level and when services echo them', async () => {
    const bot = await f.start({ SLACK_BOT_TOKEN: BOT_TOKEN, OPENAI_API_KEY: API_KEY, LOG_LEVEL: 'debug' });
    // A model server that echoes the key, as OpenAI's "Incorrect API key provided" does.
    f.model.enqueue(
      reply.error(401, {
        error: { message: `Incorrect API key provided: ${API_KEY}`, type: 'invalid_request_error' },
      }),
    );
    await f.mention(bot, 'hello');
    await f.waitForText((text) =>
      text.startsWith('The model service refused this request (check the bot’s model settings)'),
    );
    // Slack failing (a card that cannot be posted) and a forged request, for more log lines.
    f.slack.setResponse('chat.postMessage', (params) =>
      params.blocks ? slackReply.error('invalid_auth') : f.slack.defaultReply('chat.postMessage', params),
    );
    f.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: 'x' } }]));
    await f.mention(bot, 'note x');
    await f.waitForText((text) => text.includes('could not post the approval card'));
    await fetch(`${bot.url}/slack/events`, { method: 'POST', body: '{"token":"xoxb-1-2-3"}' });

    await bot.kill('SIGTERM');
    const output = bot.output();
    expect(output).toContain('approval card could not be posted');
    for (const secret of [BOT_TOKEN, API_KEY, SECRET, 'planted-bot-token', 'planted0api0key']) {
      expect(output).not.toContain(secret);
    }
    // The bot did use them: Slack saw the token, so the test planted real values.
    expect(f.slack.calls.some((call) => call.token === BOT_TOKEN)).toBe(true);
  });

  it('creates the database file (and its WAL files) readable by the owner only', async () => {
    const bot = await f.start();
    f.model.enqueue(reply.text('hi'));
    await f.mention(bot, 'hello');
    await f.waitForText((text) => text === 'hi');
    for (const file of [f.dbPath, `${f.dbPath}-wal`, `${f.dbPath}-shm`]) {
      expect({ file, mode: statSync(file).mode & 0o777 }).toEqual({ file, mode: 0o600 });
    }
  });
});

describe('what reaches Slack, and who may decide', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness({ env: { ADMIN_USER_IDS: 'UADMIN' } });
  });
  afterEach(async () => {
    await h.close();
  });

  it('escapes &, < and > in text from the model and users, so nobody forges mentions or links', async () => {
    h.model.enqueue(
      reply.toolCalls([
        {
          name: 'post_message',
          arguments: { channel: 'C0002', text: '<!here> free <https://x.example|pizza>' },
        },
      ]),
      reply.text('Done <!channel> & see <https://evil.example|this>, thanks <@U0123ABC>'),
    );
    await h.mention('<!everyone> post it');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    // Arguments are shown literally in a preformatted rich_text block; no mrkdwn block carries them.
    const blocks = JSON.stringify(
      (card.params.blocks as { type: string }[]).filter((block) => block.type !== 'rich_text'),
    );
    expect(blocks).not.toContain('<!here>');
    expect(blocks).not.toContain('<https://x.example');
    await h.click(card, 'approve', 'UADMIN');
    const answer = await h.waitForText((text) => text.startsWith('Done'));
    expect(answer).toBe(
      'Done &lt;!channel&gt; &amp; see &lt;https://evil.example|this&gt;, thanks <@U0123ABC>',
    );
    const posted = await h.slack.waitForCall('chat.postMessage', (call) => call.params.channel === 'C0002');
    expect(posted.params.text).toBe('&lt;!here&gt; free &lt;https://x.example|pizza&gt;');
  });

  it("checks the clicker against the approval's own team and conversation, not the payload's claims", async () => {
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'guarded' } }]),
      reply.text('Saved.'),
    );
    await h.mention('note guarded');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    const forged = (teamId: string, channelId: string) =>
      postInteraction(
        h.url,
        SECRET,
        blockActionsPayload({
          userId: 'U2',
          teamId,
          channelId,
          messageTs: cardTs(card),
          actionId: 'approval:approve',
          value: approvalIdOf(card),
        }),
      );
    await forged('T2', String(card.params.channel));
    await forged('T1', 'C999');
    const told = await h.slack.waitForCall('chat.postEphemeral', (call) => call.params.channel === 'C999');
    expect(told.params.text).toMatch(/You cannot decide this request/);
    const foreign = h.slack.callsTo('chat.postEphemeral')[0];
    expect(foreign?.params.text).toMatch(/does not belong to an approval request/);
    expect(h.slack.callsTo('chat.update')).toHaveLength(0);
    expect(h.model.requests).toHaveLength(1);

    await h.click(card, 'approve', 'U2');
    await h.waitForText((text) => text === 'Saved.');
  });
});
