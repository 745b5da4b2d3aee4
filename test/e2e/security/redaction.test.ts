import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reply } from '../../support/fake-openai.js';
import { rejectWithModal } from '../decision-modals.js';
import { approvalIdOf, type Harness, startHarness } from '../harness.js';
import { type ProcessFixture, startProcessFixture } from '../process-fixture.js';

const ADMIN = 'UADMIN';
const REFRESH_TOKEN = 'xoxe.xoxp-1-planted0refresh0token0abcdef';

describe('/approvals show and the card redact a rejection reason', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness({ env: { ADMIN_USER_IDS: ADMIN } });
  });
  afterEach(async () => {
    await h.close();
  });

  it('a reason quoting a token is shown redacted, on the card and by show', async () => {
    h.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: 'x' } }]), reply.text('ok'));
    await h.mention('note x');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    await rejectWithModal(h, card, ADMIN, `do not paste ${REFRESH_TOKEN} or xoxc-1234567890-planted here`);
    const update = await h.slack.waitForCall('chat.update');
    expect(JSON.stringify(update.params.blocks)).toContain('do not paste [redacted]');
    const show = await h.approvals(`show ${approvalIdOf(card)}`, ADMIN);
    const shown = JSON.stringify(show.params.blocks);
    expect(shown).toContain('*Reason:* do not paste [redacted] or [redacted] here');
    for (const text of [JSON.stringify(update.params), shown]) {
      expect(text).not.toContain('planted0refresh');
      expect(text).not.toContain('xoxc-');
    }
  });
});

describe('the running bot at LOG_LEVEL=debug', () => {
  let f: ProcessFixture;
  beforeEach(async () => {
    f = await startProcessFixture();
  });
  afterEach(async () => {
    await f.close();
  });

  it("logs Bolt's and the Web API client's lines as its own JSON lines, never a request or response body", async () => {
    const bot = await f.start({ LOG_LEVEL: 'debug' });
    const marker = 'MARKER-private-words-5e1f';
    f.model.enqueue(reply.text(`You said ${marker}.`));
    await f.mention(bot, `remember ${marker}`);
    await f.waitForText((text) => text.includes(marker));
    await bot.kill('SIGTERM');
    const output = bot.output();
    expect(output).not.toContain(marker);
    // The libraries did log (their lines now carry a source), through the bot's logger.
    expect(output).toMatch(/"source":"(bolt|web-api)"/);
    expect(output).toContain('http request body: (not logged)');
  });
});
