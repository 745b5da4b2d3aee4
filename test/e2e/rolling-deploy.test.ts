import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runAuditCli } from '../../src/cli/audit-cli.js';
import { type BotProcess, refusesConnections } from '../support/bot-process.js';
import type { ChatRequest } from '../support/fake-openai.js';
import { reply } from '../support/fake-openai.js';
import type { SlackCall } from '../support/fake-slack.js';
import { type HeldOutcome, startHeldPost } from '../support/held-request.js';
import { seenMessages } from '../support/slack-messages.js';
import {
  appMentionEvent,
  eventEnvelope,
  FORM_CONTENT_TYPE,
  nextTs,
  postEvent,
} from '../support/slack-requests.js';
import { waitUntil } from '../support/wait.js';
import { approvalIdOf, cardClick, cardTs, isApprovalCard, SECRET } from './harness.js';
import { type ProcessFixture, startProcessFixture } from './process-fixture.js';
import {
  afterClick,
  CLICKER,
  type Conversation,
  decideCard,
  decisionOf,
  events,
  startClicker,
} from './rolling-clicks.js';
import { answersWhileStopping, createFleet } from './rolling-fleet.js';

const PROCESSES = 3;
/** Messages sent at each point of the deploy (before it, while a process drains, after its replacement). */
const WAVE = 4;
/** The model's answer after a note's tool call: runs are in flight when a process is told to stop. */
const ANSWER_DELAY_MS = 500;
/** What each process may take to drain; the first one holds a model call longer, so it hands that run over. */
const GRACE_MS = 2000;
/** How long a step may take on two busy cores. */
const WAIT = { timeoutMs: 20_000 };
const ENV = { RUN_LEASE_MS: '3000', SHUTDOWN_GRACE_MS: String(GRACE_MS), LOG_LEVEL: 'info' };

/** "note K": a note, approved or rejected, then "Saved K." or "Not saved K."; "think K": hangs once, then answers. */
function createModel() {
  const hung = new Set<string>();
  return (request: ChatRequest) => {
    const asked = [...request.messages].reverse().find((m) => m.role === 'user');
    const text = typeof asked?.content === 'string' ? asked.content : '';
    const [, kind, k] = /(note|think) (\d+)/.exec(text) ?? [];
    if (kind === 'think') {
      if (k === undefined || hung.has(k)) return reply.text(`Thought ${k}.`);
      hung.add(k);
      return reply.hang();
    }
    const last = request.messages.at(-1);
    if (last?.role !== 'tool')
      return reply.toolCalls([{ name: 'create_note', arguments: { text: `note ${k}` } }]);
    const told = typeof last.content === 'string' ? last.content : '';
    const answer = /reject/i.test(told) ? `Not saved ${k}.` : `Saved ${k}.`;
    return { kind: 'delayed' as const, ms: ANSWER_DELAY_MS, reply: reply.text(answer) };
  };
}

const retryHeaders = (attempt: number): Record<string, string> =>
  attempt === 0 ? {} : { 'x-slack-retry-num': String(attempt), 'x-slack-retry-reason': 'http_error' };

/**
 * Three bot processes on one PostgreSQL database, restarted one at a time with SIGTERM (the next is started
 * once the old one exited, and the deploy moves on once it is healthy) while messages and clicks keep arriving,
 * spread over the three, the one stopping included: a click and a message it is in the middle of receiving
 * when the signal comes, and whatever a load balancer still sends it while it drains.
 */
describe('a rolling deploy of three processes on PostgreSQL', () => {
  let f: ProcessFixture;
  beforeEach(async () => {
    f = await startProcessFixture({ kind: 'postgres' });
  });
  afterEach(async () => {
    await f.close();
  });

  it('loses no click or message, runs no call twice and leaves no card with buttons', async () => {
    const began = Date.now();
    f.model.setHandler(createModel());
    const fleet = createFleet(await Promise.all(Array.from({ length: PROCESSES }, () => f.start(ENV))));
    const conversations = new Map<string, Conversation>();
    let next = 0;
    const envelopeFor = (kind: Conversation['kind']) => {
      const k = next++;
      const ts = nextTs();
      const expected =
        kind === 'think' ? `Thought ${k}.` : decisionOf(k) === 'approve' ? `Saved ${k}.` : `Not saved ${k}.`;
      conversations.set(ts, { k, kind, expected });
      const text = `<@UBOT> ${kind} ${k}`;
      return { k, ts, envelope: eventEnvelope(appMentionEvent({ user: 'U1', channel: 'C1', text, ts })) };
    };
    const sendEvent = (slot: number, envelope: Record<string, unknown>) =>
      fleet.deliver(slot, (url, attempt) => postEvent(events(url), SECRET, envelope, retryHeaders(attempt)));
    const wave = () =>
      Promise.all(Array.from({ length: WAVE }, (_, i) => sendEvent(i, envelopeFor('note').envelope)));
    const cardOf = (k: number) =>
      f.slack
        .callsTo('chat.postMessage')
        .filter(isApprovalCard)
        .find((card) => conversations.get(String(card.params.thread_ts))?.k === k);
    const decide = (card: SlackCall, slot: number) => decideCard(f, fleet, card, slot, conversations);

    // The first conversations' cards wait for the step that clicks them on the process being stopped.
    await wave();
    const held = await waitUntil(() => {
      const cards = [0, 1, 2].map(cardOf);
      return cards.every((card) => card !== undefined) ? (cards as SlackCall[]) : undefined;
    }, WAIT);
    const clicker = startClicker(f, new Set(held.map(approvalIdOf)), decide);

    for (let step = 0; step < PROCESSES; step++) {
      const bot = fleet.bots[step] as BotProcess;
      // A run that holds a model call past the grace period: this process hands it over.
      if (step === 0) {
        const think = envelopeFor('think');
        expect((await postEvent(events(bot.url), SECRET, think.envelope)).status).toBe(200);
        await waitUntil(
          () => f.model.requests.some((r) => JSON.stringify(r.messages).includes(`think ${think.k}`)),
          WAIT,
        );
      }
      await wave();
      // A click and a message the process is in the middle of receiving when SIGTERM comes.
      const card = held[step] as SlackCall;
      const message = envelopeFor('note');
      const heldClick = await startHeldPost(events(bot.url), SECRET, {
        body: new URLSearchParams({
          payload: JSON.stringify(cardClick(card, decisionOf(step), CLICKER)),
        }).toString(),
        contentType: FORM_CONTENT_TYPE,
      });
      const heldMessage = await startHeldPost(events(bot.url), SECRET, {
        body: JSON.stringify(message.envelope),
        contentType: 'application/json',
      });
      expect(await refusesConnections(bot.url)).toBe(false);
      fleet.stopping.add(bot);
      const exited = bot.kill('SIGTERM');
      await waitUntil(() => refusesConnections(bot.url), WAIT);
      const [clicked, messaged] = await Promise.all([heldClick.finish(), heldMessage.finish()]);
      fleet.record({ slot: step, stopping: true, outcome: outcomeOf(clicked) });
      fleet.record({ slot: step, stopping: true, outcome: outcomeOf(messaged) });
      // Answered 200: the stopping process owns it. Anything else: Slack delivers the event again, the person
      // clicks again, to another process.
      const follow = [
        isOk(clicked) ? afterClick(f, fleet, card, step + 1, conversations) : decide(card, step + 1),
        isOk(messaged) ? Promise.resolve() : sendEvent(step + 1, message.envelope).then(() => undefined),
        wave(),
      ];
      expect(await exited).toBe(0);
      fleet.stopping.delete(bot);
      fleet.bots[step] = await f.start(ENV);
      await Promise.all([...follow, wave()]);
    }

    const notes = [...conversations.values()].filter((c) => c.kind === 'note');
    await waitUntil(() => clicker.count() + held.length >= notes.length, {
      timeoutMs: 30_000,
      message: 'a card for every message',
    });
    await clicker.stop();
    const answered = () => {
      const texts = answersByThread(f.slack.calls);
      return [...conversations.keys()].every((ts) => (texts.get(ts)?.length ?? 0) > 0);
    };
    await waitUntil(answered, { timeoutMs: 30_000, message: 'every message answered' });
    // Nothing left to do (every run ended, no click undecided, nothing owed to Slack); then all stop, so
    // nothing can come after what is read below.
    await waitUntil(async () => {
      const [open] = await f.query(
        `select (select count(*) from runs where status in ('running', 'paused'))
              + (select count(*) from accepted_requests where click is not null and decided_at is null)
              + (select count(*) from deliveries) as n`,
      );
      return Number(open?.n) === 0;
    }, WAIT);
    const deployMs = Date.now() - began;
    expect(await Promise.all(fleet.bots.map((bot) => bot.kill('SIGTERM')))).toEqual([0, 0, 0]);

    // Every message got one answer, in its thread, as its click decided.
    const texts = answersByThread(f.slack.calls);
    for (const [ts, conversation] of conversations) expect(texts.get(ts)).toEqual([conversation.expected]);
    // Every card was decided as clicked, by the person who clicked, and shows no buttons any more.
    const cards = f.slack.callsTo('chat.postMessage').filter(isApprovalCard);
    expect(cards).toHaveLength(notes.length);
    const approvals = await f.query('select id, status, decided_by from approvals');
    for (const card of cards) {
      const k = conversations.get(String(card.params.thread_ts))?.k ?? -1;
      const row = approvals.find((a) => a.id === approvalIdOf(card));
      expect(row).toMatchObject({
        status: decisionOf(k) === 'approve' ? 'executed' : 'rejected',
        decided_by: CLICKER,
      });
      expect(finalCard(f.slack.calls, card)).toBe('no buttons');
    }
    // Each approved call ran once: one note, one `tool.finished`; a rejected one never ran.
    const approvedIds = cards.filter(
      (card) => approvals.find((a) => a.id === approvalIdOf(card))?.status === 'executed',
    );
    const created = await f.query('select text from notes');
    expect(created.map((n) => n.text).sort()).toEqual(
      notes
        .filter((c) => decisionOf(c.k) === 'approve')
        .map((c) => `note ${c.k}`)
        .sort(),
    );
    const finished = await f.query("select approval_id from audit_events where kind = 'tool.finished'");
    expect(finished.map((e) => e.approval_id).sort()).toEqual(approvedIds.map(approvalIdOf).sort());
    // The audit log is one intact chain.
    const out: string[] = [];
    const code = await runAuditCli(
      ['verify'],
      { ...f.env },
      { out: (l) => out.push(l), err: (l) => out.push(l), now: Date.now },
    );
    expect(out.join('\n')).toMatch(/chain intact/);
    expect(code).toBe(0);
    console.info(
      `[rolling deploy] ${conversations.size} messages, ${cards.length} cards over ${PROCESSES} processes restarted one at a time in ${deployMs} ms; attempts at stopping processes: ${JSON.stringify(answersWhileStopping(fleet))}; ${fleet.attempts.length} deliveries in all`,
    );
  }, 120_000);
});

const isOk = (outcome: HeldOutcome) => outcome.ok && outcome.status === 200;
const outcomeOf = (outcome: HeldOutcome) => (outcome.ok ? outcome.status : ('refused' as const));

/** The answers each thread shows (cards and the bot's notices about them excepted), oldest first. */
function answersByThread(calls: readonly SlackCall[]): Map<string, string[]> {
  const byThread = new Map<string, string[]>();
  for (const message of seenMessages(calls.filter((c) => !isApprovalCard(c)))) {
    if (!message.finished || message.threadTs === undefined) continue;
    if (!/^(Saved|Not saved|Thought) \d+\.$/.test(message.text)) continue;
    byThread.set(message.threadTs, [...(byThread.get(message.threadTs) ?? []), message.text]);
  }
  return byThread;
}

/** What a card shows last: its final `chat.update` (the last one Slack received wins). */
function finalCard(calls: readonly SlackCall[], card: SlackCall): 'never updated' | 'buttons' | 'no buttons' {
  const ts = cardTs(card);
  const last = calls
    .filter(
      (c) => c.method === 'chat.update' && c.params.ts === ts && c.params.channel === card.params.channel,
    )
    .at(-1);
  if (!last) return 'never updated';
  return isApprovalCard(last) ? 'buttons' : 'no buttons';
}
