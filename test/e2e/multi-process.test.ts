import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runAuditCli } from '../../src/cli/audit-cli.js';
import { type BotProcess, startBotProcess } from '../support/bot-process.js';
import { type ChatRequest, type FakeOpenAI, reply, startFakeOpenAI } from '../support/fake-openai.js';
import { type FakeSlack, type SlackCall, startFakeSlack } from '../support/fake-slack.js';
import { seenMessages } from '../support/slack-messages.js';
import {
  appMentionEvent,
  eventEnvelope,
  nextTs,
  postEvent,
  postInteraction,
} from '../support/slack-requests.js';
import { DATABASE_KINDS, type FreshDatabase, freshDatabase } from '../support/test-database.js';
import { sleep, waitUntil } from '../support/wait.js';
import { rows } from './db-rows.js';
import { approvalIdOf, cardClick, isApprovalCard, SECRET } from './harness.js';

const PROCESSES = 3;
const CONVERSATIONS = 9;
/** The model's answer after a note was created takes this long, so a process is killed while driving runs. */
const ANSWER_DELAY_MS = 1500;
const ADMIN = 'UADMIN';
/** The delete request's reminder period (the policy file says `1s`). */
const REMIND_MS = 1000;

/** What the model says: a note per "note K" message, then "Saved K"; the delete request, then what it was told. */
function answer(request: ChatRequest) {
  const last = request.messages.at(-1);
  const asked = [...request.messages].reverse().find((m) => m.role === 'user');
  const text = typeof asked?.content === 'string' ? asked.content : '';
  const k = /note (\d+)/.exec(text)?.[1] ?? '?';
  if (last?.role === 'tool') {
    const told = typeof last.content === 'string' ? last.content : '';
    if (/delete/.test(text)) return reply.text(`Delete: ${told.includes('expired') ? 'expired' : told}`);
    return { kind: 'delayed' as const, ms: ANSWER_DELAY_MS, reply: reply.text(`Saved ${k}.`) };
  }
  if (/delete/.test(text)) return reply.toolCalls([{ name: 'delete_note', arguments: { id: 1 } }]);
  return reply.toolCalls([{ name: 'create_note', arguments: { text: `note ${k}` } }]);
}

/**
 * Three real bot processes on one database, one fake Slack and one fake model: events and clicks spread over
 * the processes, the same click sent to two of them at once, an event retry delivered to another process, one
 * process killed while it drives runs. Nothing is lost and nothing runs twice.
 */
describe.each(DATABASE_KINDS)('three bot processes on one %s database', (kind) => {
  let slack: FakeSlack;
  let model: FakeOpenAI;
  let database: FreshDatabase;
  let bots: BotProcess[] = [];
  beforeEach(async () => {
    slack = await startFakeSlack();
    model = await startFakeOpenAI();
    model.setHandler(answer);
    database = await freshDatabase(kind);
  });
  afterEach(async () => {
    await Promise.all(bots.map((bot) => bot.kill()));
    bots = [];
    await slack.close();
    await model.close();
    await database.drop();
  });

  it('spreads the work, survives SIGKILL of one process, and runs every approved call once', async () => {
    const policy = join(mkdtempSync(join(tmpdir(), 'bot-policy-')), 'policy.json');
    writeFileSync(
      policy,
      JSON.stringify({ tools: { delete_note: { remindAfter: '1s', expiresAfter: '9s' } } }),
    );
    const env = {
      SLACK_BOT_TOKEN: 'xoxb-test-token',
      SLACK_SIGNING_SECRET: SECRET,
      SLACK_API_URL: slack.url,
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: model.baseURL,
      OPENAI_STREAM: 'false',
      ADMIN_USER_IDS: ADMIN,
      APPROVAL_POLICY_FILE: policy,
      RUN_LEASE_MS: '3000',
      LOG_LEVEL: 'warn',
      ...database.env,
    };
    bots = await Promise.all(Array.from({ length: PROCESSES }, () => startBotProcess({ env })));
    const events = (i: number) => `${bots[i % PROCESSES]?.url}/slack/events`;

    // Every conversation reaches one process; its retry (same event id) reaches the next one at the same time.
    await Promise.all(
      Array.from({ length: CONVERSATIONS }, async (_, k) => {
        const ts = nextTs();
        const envelope = eventEnvelope(
          appMentionEvent({ user: 'U1', channel: 'C1', text: `<@UBOT> note ${k}`, ts }),
        );
        const [first, retry] = await Promise.all([
          postEvent(events(k), SECRET, envelope),
          postEvent(events(k + 1), SECRET, envelope, {
            'x-slack-retry-num': '1',
            'x-slack-retry-reason': 'http_timeout',
          }),
        ]);
        expect([first.status, retry.status]).toEqual([200, 200]);
      }),
    );
    const deleteTs = nextTs();
    await postEvent(
      events(0),
      SECRET,
      eventEnvelope(
        appMentionEvent({ user: 'U1', channel: 'C1', text: '<@UBOT> delete the old note', ts: deleteTs }),
      ),
    );

    const cards = await waitUntil(
      () => {
        const posted = slack.callsTo('chat.postMessage').filter(isApprovalCard);
        return posted.length >= CONVERSATIONS + 1 ? posted : undefined;
      },
      { timeoutMs: 30_000, message: 'expected one card per conversation' },
    );
    if (cards.length !== CONVERSATIONS + 1) {
      console.info(cards.map((c) => `${c.params.thread_ts} ${approvalIdOf(c)}`).join('\n'));
      console.info(
        JSON.stringify(
          await rows(
            database.config,
            'select id, conversation_id, status from runs order by conversation_id',
          ),
        ),
      );
      console.info(
        bots
          .map((b) => b.output())
          .join('\n-----\n')
          .slice(0, 5000),
      );
    }
    expect(cards).toHaveLength(CONVERSATIONS + 1);
    const noteCards = cards.filter((card) => card.params.thread_ts !== deleteTs);

    // Two people click every card at the same moment, on two different processes.
    const clicks = await Promise.all(
      noteCards.map((card, i) =>
        Promise.all([
          postInteraction(events(i), SECRET, cardClick(card, 'approve', 'U2')),
          postInteraction(events(i + 1), SECRET, cardClick(card, 'approve', 'U3')),
        ]),
      ),
    );
    expect(clicks.flat().map((r) => r.status)).toEqual(clicks.flat().map(() => 200));

    // While the decided runs wait for the model, one process dies: once every note exists, so the kill lands
    // after the tools ran (a kill while a tool runs leaves its outcome unknown, by design, never run twice).
    await waitUntil(
      async () =>
        (await rows(database.config, 'select id from notes')).length === CONVERSATIONS ? true : undefined,
      { timeoutMs: 30_000, message: 'every approved note created' },
    );
    const killedAt = Date.now();
    expect(await bots[0]?.kill('SIGKILL')).toBeNull();
    const saved = () => finalTexts(slack).filter((t) => t.startsWith('Saved'));
    await waitUntil(() => saved().length >= CONVERSATIONS, {
      timeoutMs: 30_000,
      message: 'every conversation answered',
    });
    const takeoverMs = Date.now() - killedAt;
    console.info(
      bots
        .map((b) =>
          b
            .output()
            .split('\n')
            .filter((l) => /taken over|interrupted|lease/.test(l))
            .join('\n'),
        )
        .join('\n--\n'),
    );

    await waitUntil(() => finalTexts(slack).some((t) => t.startsWith('Delete: expired')), {
      timeoutMs: 20_000,
    });
    await sleep(1000);

    // Every conversation got its answer once; every note was created once.
    expect(saved().sort()).toEqual(Array.from({ length: CONVERSATIONS }, (_, k) => `Saved ${k}.`).sort());
    const notes = await rows(database.config, 'select text from notes order by text');
    expect(notes.map((n) => n.text)).toEqual(
      Array.from({ length: CONVERSATIONS }, (_, k) => `note ${k}`).sort(),
    );
    // One decision per card however many clicks, and each was approved by one of the two clickers.
    const decided = await rows(
      database.config,
      "select id, decided_by from approvals where tool_name = 'create_note'",
    );
    expect(decided.every((a) => a.decided_by === 'U2' || a.decided_by === 'U3')).toBe(true);
    expect(new Set(noteCards.map(approvalIdOf)).size).toBe(CONVERSATIONS);
    // The waiting delete request: reminders at most one a period, each posted once; one expiry; one answer.
    const reminders = slack
      .callsTo('chat.postMessage')
      .filter((c) => String(c.params.text).includes('Reminder'));
    const reminded = (
      await rows(database.config, "select at from audit_events where kind = 'approval.reminded' order by seq")
    ).map((r) => Number(r.at));
    expect(reminded.length).toBeGreaterThan(0);
    expect(reminders).toHaveLength(reminded.length);
    expect(reminded.slice(1).every((at, i) => at - (reminded[i] ?? 0) >= REMIND_MS)).toBe(true);
    const expiries = await rows(
      database.config,
      "select seq from audit_events where kind = 'approval.expired'",
    );
    expect(expiries).toHaveLength(1);
    expect(finalTexts(slack).filter((t) => t.startsWith('Delete:'))).toEqual(['Delete: expired']);
    // The audit log is one intact chain.
    const out: string[] = [];
    const code = await runAuditCli(
      ['verify'],
      { ...database.env },
      { out: (l) => out.push(l), err: (l) => out.push(l), now: Date.now },
    );
    expect(out.join('\n')).toMatch(/chain intact/);
    expect(code).toBe(0);
    console.info(
      `[multi-process ${kind}] ${CONVERSATIONS + 1} conversations over ${PROCESSES} processes, 1 killed; all answered ${takeoverMs} ms after the kill; ${model.requests.length} model requests`,
    );
  }, 60_000);
});

/** Answers posted in threads (cards and notices excepted). */
function finalTexts(slack: FakeSlack): string[] {
  return seenMessages(slack.calls.filter((c: SlackCall) => !isApprovalCard(c)))
    .filter((m) => m.finished)
    .map((m) => m.text);
}
