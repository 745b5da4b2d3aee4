import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../../src/agent/tool.js';
import { ACTION_IDS } from '../../../src/slack/ids.js';
import { reply } from '../../support/fake-openai.js';
import type { SlackCall } from '../../support/fake-slack.js';
import { isRecord } from '../../support/json-value.js';
import { blockActionsPayload } from '../../support/slack-payloads.js';
import { postInteraction } from '../../support/slack-requests.js';
import { approvalIdOf, cardTs, type Harness, SECRET, startHarness } from '../harness.js';
import { startPolicyHarness } from '../policy-support.js';

const ADMIN = 'UADMIN';
const TOKEN = 'xoxb-4242424242-planted0card0token';

/** A tool taking far more text than a card can show (MCP tools can). */
const bigTool = defineTool({
  name: 'publish_report',
  description: 'Publishes a long report.',
  parameters: z.object({ title: z.string(), body: z.string().max(100_000) }),
  needsApproval: true,
  execute: async () => 'Published.',
});

type Block = { type: string; block_id?: string; elements?: unknown[] };

function preformatted(blocks: Block[]): string[] {
  const texts: string[] = [];
  for (const block of blocks) {
    if (block.type !== 'rich_text') continue;
    for (const element of block.elements ?? []) {
      if (!isRecord(element) || element.type !== 'rich_text_preformatted' || !Array.isArray(element.elements))
        continue;
      texts.push(element.elements.map((t) => (isRecord(t) ? String(t.text) : '')).join(''));
    }
  }
  return texts;
}

function buttons(blocks: Block[]): { action_id: string; value: string }[] {
  return blocks
    .filter((block) => block.type === 'actions')
    .flatMap((block) => (block.elements ?? []) as { action_id: string; value: string }[]);
}

function viewOf(call: SlackCall): Block[] {
  const view = call.params.view;
  if (!isRecord(view) || !Array.isArray(view.blocks)) throw new Error('no view');
  expect(view.blocks.length).toBeLessThanOrEqual(100);
  expect(JSON.stringify(view).length).toBeLessThan(250_000);
  return view.blocks as Block[];
}

describe('the approver can read every argument before deciding', () => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  const click = (card: SlackCall, actionId: string, value: string, inView?: string) => {
    const payload = blockActionsPayload({
      userId: ADMIN,
      channelId: String(card.params.channel),
      messageTs: cardTs(card),
      threadTs: String(card.params.thread_ts),
      actionId,
      value,
    });
    return postInteraction(
      h.url,
      SECRET,
      inView
        ? { ...payload, container: { type: 'view', view_id: inView }, view: { id: inView, type: 'modal' } }
        : payload,
    );
  };

  it('a cut card offers View all arguments: a paginated modal with every character (secrets masked); Edit refuses to open rather than cut', async () => {
    h = await startHarness({
      env: { ADMIN_USER_IDS: ADMIN },
      overrides: { tools: (builtIn) => [...builtIn, bigTool] },
    });
    const body = Array.from({ length: 1500 }, (_, i) => `line ${i}: the quarterly numbers go here`).join(
      '\n',
    );
    const args = { title: `uses ${TOKEN}`, body };
    h.model.enqueue(reply.toolCalls([{ name: 'publish_report', arguments: args }]));
    await h.mention('publish it');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    const blocks = card.params.blocks as Block[];
    const shown = preformatted(blocks).join('');
    expect(shown.length).toBeLessThan(2800);
    expect(shown).toContain('truncated');
    const view = buttons(blocks).find((b) => b.action_id === ACTION_IDS.viewArguments);
    expect(view?.value).toBe(approvalIdOf(card));

    // Page 1 opens; the next pages replace it in the same modal until the last.
    await click(card, ACTION_IDS.viewArguments, approvalIdOf(card));
    const opened = await h.slack.waitForCall('views.open');
    const pages = [viewOf(opened)];
    for (;;) {
      const next = buttons(pages.at(-1) ?? []).find((b) => b.value.startsWith(`${pages.length + 1}:`));
      if (!next) break;
      const before = h.slack.callsTo('views.update').length;
      await click(card, next.action_id, next.value, 'VARGS');
      const update = await h.slack.waitForCall(
        'views.update',
        () => h.slack.callsTo('views.update').length > before,
      );
      expect(update.params.view_id).toBe('VARGS');
      pages.push(viewOf(update));
    }
    expect(pages.length).toBeGreaterThan(1);
    for (const page of pages)
      for (const chunk of preformatted(page)) expect(chunk.length).toBeLessThanOrEqual(2900);
    const all = pages.map((page) => preformatted(page).join('')).join('');
    expect(all).toBe(JSON.stringify({ title: 'uses [redacted]', body }, null, 2));
    expect(JSON.stringify(h.slack.calls)).not.toContain('planted0card0token');

    // App Home and /approvals show cut the arguments too, and offer the same button.
    await h.sendEvent({
      type: 'app_home_opened',
      user: ADMIN,
      channel: 'D0HOME',
      tab: 'home',
      event_ts: '1.1',
    });
    const home = await h.slack.waitForCall('views.publish');
    expect(buttons(viewOf(home)).map((b) => b.action_id)).toContain(ACTION_IDS.viewArguments);
    const show = await h.approvals(`show ${approvalIdOf(card)}`, ADMIN);
    expect(buttons(show.params.blocks as Block[]).map((b) => b.action_id)).toEqual([
      ACTION_IDS.viewArguments,
    ]);

    // The Edit form cannot hold this much: it is not opened with the arguments cut.
    await h.click(card, 'edit', ADMIN);
    const told = await h.slack.waitForCall('chat.postEphemeral', (c) => c.params.user === ADMIN);
    expect(told.params.text).toMatch(/will not open it with part of them cut off/);
    expect(h.slack.callsTo('views.open')).toHaveLength(1);
  });

  it('secrets in arguments are masked on the card and its copy in the approval channel', async () => {
    h = await startPolicyHarness({ tools: { create_note: { approvalChannel: 'C0APPROVALS' } } });
    h.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: `remember ${TOKEN}` } }]));
    await h.mention('note the token');
    const copy = await h.slack.waitForCall('chat.postMessage', (c) => c.params.channel === 'C0APPROVALS');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    for (const posted of [card, copy]) {
      const text = preformatted(posted.params.blocks as Block[]).join('');
      expect(text).toContain('remember [redacted]');
      expect(JSON.stringify(posted.params)).not.toContain('planted0card0token');
    }
  });
});
