import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import type { SlackCall } from '../support/fake-slack.js';
import { blockActionsPayload } from '../support/slack-payloads.js';
import {
  appMentionEvent,
  eventEnvelope,
  FORM_CONTENT_TYPE,
  nextTs,
  signedPost,
  slackSignature,
} from '../support/slack-requests.js';
import { rows } from './db-rows.js';
import { approvalIdOf, cardTs, type Harness, SECRET, startHarness } from './harness.js';
import { type ProcessFixture, startProcessFixture } from './process-fixture.js';

/** One generated request and the statuses a correct bot may answer it with. */
interface Probe {
  kind: string;
  body: string;
  contentType: string;
  sign: 'valid' | 'none' | 'wrong' | 'stale';
  expect: readonly number[];
}

/** A small seeded generator, so a failure can be replayed. */
function random(seed: number) {
  let a = seed;
  const next = () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T;
  const text = (n: number) => Array.from({ length: n }, () => String.fromCharCode(32 + int(95))).join('');
  return { int, pick, text };
}

const WEIRD: readonly unknown[] = [null, 0, -1, 1e308, true, '', 'x'.repeat(300), [], [1, 2], {}, { a: {} }];

function form(payload: string): string {
  return new URLSearchParams({ payload }).toString();
}

/** Builds the probes: every kind a sender could get wrong, with a real approval to aim forged clicks at. */
function probes(card: SlackCall): Probe[] {
  const r = random(20260611);
  const approvalId = approvalIdOf(card);
  const channelId = String(card.params.channel);
  const messageTs = cardTs(card);
  const click = (overrides: Partial<Parameters<typeof blockActionsPayload>[0]>) =>
    blockActionsPayload({
      userId: 'U7',
      channelId,
      messageTs,
      actionId: 'approval:approve',
      value: approvalId,
      ...overrides,
    });
  const event = (fields: Record<string, unknown>) =>
    JSON.stringify(eventEnvelope({ type: 'app_mention', ...fields }));
  const list: Probe[] = [];
  const add = (n: number, make: (i: number) => Omit<Probe, 'kind'>, kind: string) => {
    for (let i = 0; i < n; i += 1) list.push({ kind, ...make(i) });
  };
  const mention = () =>
    JSON.stringify(
      eventEnvelope(appMentionEvent({ user: 'U5', channel: 'C5', text: '<@UBOT> hi', ts: nextTs() })),
    );

  add(
    100,
    () => ({ body: mention(), contentType: 'application/json', sign: 'none', expect: [401] }),
    'unsigned',
  );
  add(
    100,
    () => ({ body: mention(), contentType: 'application/json', sign: 'wrong', expect: [401] }),
    'forged signature',
  );
  add(
    50,
    () => ({ body: mention(), contentType: 'application/json', sign: 'stale', expect: [401] }),
    'stale timestamp',
  );
  add(
    100,
    (i) => ({
      body: `{${r.text(1 + (i % 40))}`,
      contentType: 'application/json',
      sign: 'valid',
      expect: [400],
    }),
    'invalid JSON',
  );
  add(
    100,
    (i) => ({
      body: JSON.stringify(WEIRD[i % 3 === 0 ? 0 : r.int(9)]),
      contentType: 'application/json',
      sign: 'valid',
      expect: [400],
    }),
    'not an object',
  );
  add(
    60,
    (i) => ({
      body: form(i % 2 === 0 ? 'null' : JSON.stringify(r.pick(WEIRD.slice(0, 9)))),
      contentType: FORM_CONTENT_TYPE,
      sign: 'valid',
      expect: [400],
    }),
    'form payload not an object',
  );
  add(
    40,
    (i) => ({
      body: form(`{"type":${r.text(5)}`),
      contentType: FORM_CONTENT_TYPE,
      sign: i % 2 ? 'valid' : 'none',
      expect: [i % 2 ? 400 : 401],
    }),
    'form payload invalid JSON',
  );
  add(
    20,
    (i) => ({
      body: `{"pad":"${'a'.repeat(1_100_000 + i)}"}`,
      contentType: 'application/json',
      sign: i % 2 ? 'valid' : 'none',
      expect: [413],
    }),
    'oversize',
  );
  add(
    150,
    (i) => {
      const bad = [
        { event: null },
        { user: r.pick(WEIRD), text: '<@UBOT> hi', channel: 'C5', ts: nextTs() },
        { user: 'U5', text: r.pick(WEIRD.filter((w) => typeof w !== 'string')), channel: 'C5', ts: nextTs() },
        {
          user: 'U5',
          text: '<@UBOT> hi',
          channel: r.pick(WEIRD.filter((w) => typeof w !== 'string')),
          ts: nextTs(),
        },
        {
          user: 'U5',
          text: '<@UBOT> hi',
          channel: 'C5',
          ts: r.pick(WEIRD.filter((w) => typeof w !== 'string')),
        },
        { user: 'U5', text: '<@UBOT> hi', channel: 'C5', ts: nextTs(), thread_ts: r.pick([0, {}, [], true]) },
      ][i % 6];
      const body =
        bad && 'event' in bad
          ? JSON.stringify({ ...eventEnvelope({ type: 'x' }), event: null })
          : event(bad ?? {});
      return { body, contentType: 'application/json', sign: 'valid', expect: [200, 500] };
    },
    'event with wrong types',
  );
  add(
    100,
    (i) => ({
      body: form(
        JSON.stringify(click({ value: i % 2 ? r.text(1 + r.int(60)) : `apr_${'Z'.repeat(20 + (i % 10))}` })),
      ),
      contentType: FORM_CONTENT_TYPE,
      sign: 'valid',
      expect: [200],
    }),
    'forged button value',
  );
  add(
    80,
    () => ({
      body: form(JSON.stringify(click({ teamId: `T${r.int(1000) + 2}` }))),
      contentType: FORM_CONTENT_TYPE,
      sign: 'valid',
      expect: [200],
    }),
    'foreign team',
  );
  add(
    40,
    () => ({
      body: form(JSON.stringify(click({ channelId: `C${r.int(1000) + 100}` }))),
      contentType: FORM_CONTENT_TYPE,
      sign: 'valid',
      expect: [200],
    }),
    'foreign channel',
  );
  add(
    40,
    (i) => {
      const payload: Record<string, unknown> = click({ channelId: 'C999' });
      const field = ['user', 'actions', 'team', 'channel', 'container'][i % 5] ?? 'user';
      payload[field] = r.pick(WEIRD);
      return {
        body: form(JSON.stringify(payload)),
        contentType: FORM_CONTENT_TYPE,
        sign: 'valid',
        expect: [200, 404, 500],
      };
    },
    'click with wrong types',
  );
  add(
    30,
    () => ({
      body: form(JSON.stringify(click({ actionId: `approval:${r.text(8)}` }))),
      contentType: FORM_CONTENT_TYPE,
      sign: 'valid',
      expect: [404],
    }),
    'unknown action id',
  );
  return list;
}

async function send(url: string, probe: Probe): Promise<number> {
  const now = Math.floor(Date.now() / 1000);
  const timestamp = probe.sign === 'stale' ? now - 6 * 60 : now;
  const headers: Record<string, string> =
    probe.sign === 'none'
      ? {}
      : probe.sign === 'wrong'
        ? { 'x-slack-signature': slackSignature('not-the-secret', timestamp, probe.body) }
        : {};
  if (probe.sign === 'none') {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': probe.contentType },
      body: probe.body,
    });
    await response.body?.cancel();
    return response.status;
  }
  const response = await signedPost(url, SECRET, {
    body: probe.body,
    contentType: probe.contentType,
    timestamp,
    headers,
  });
  await response.body?.cancel();
  return response.status;
}

describe('malformed and hostile input', () => {
  let h: Harness;
  let card: SlackCall;
  beforeAll(async () => {
    h = await startHarness();
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'target' } }]),
      reply.text('Saved.'),
    );
    await h.mention('note target');
    [card] = (await h.waitForCards(1)) as [SlackCall];
    await h.bot.conversations.idle();
  });
  afterAll(async () => {
    await h.close();
  });

  const snapshot = async () => {
    const count = async (from: string) => (await rows(h.database, `select count(*) as n from ${from}`))[0]?.n;
    return {
      approvals: await rows(h.database, 'select id, status, decided_by from approvals order by id'),
      runs: await rows(h.database, 'select id, status, turn from runs order by id'),
      items: await count('conversation_items'),
      conversations: await count('conversations'),
      queued: await count('queued_messages'),
      deliveries: await count('deliveries'),
      notes: await count('notes'),
      votes: await count('approval_votes'),
      audit: await count("audit_events where kind != 'approval.refused'"),
    };
  };

  it('answers 1,000+ generated requests with the right status, changes nothing, and stays healthy', async () => {
    const before = await snapshot();
    // Requests no listener acknowledges wait out Bolt's 3 s before their 404: send those in the first batch.
    const slow = (probe: Probe) => (probe.expect.includes(404) ? 0 : 1);
    const list = probes(card).sort((a, b) => slow(a) - slow(b));
    expect(list.length).toBeGreaterThanOrEqual(1000);
    const wrong: string[] = [];
    for (let i = 0; i < list.length; i += 100) {
      const batch = list.slice(i, i + 100);
      const statuses = await Promise.all(batch.map((probe) => send(h.url, probe)));
      batch.forEach((probe, j) => {
        const status = statuses[j] ?? 0;
        if (!probe.expect.includes(status))
          wrong.push(`${probe.kind}: ${status} (${probe.body.slice(0, 80)})`);
      });
    }
    expect(wrong).toEqual([]);
    await h.bot.conversations.idle();
    expect(await snapshot()).toEqual(before);
    expect(h.model.requests).toHaveLength(1);
    const health = await fetch(h.url.replace('/slack/events', '/healthz'));
    expect(health.status).toBe(200);
    const told = h.slack.callsTo('chat.postEphemeral').map((call) => String(call.params.text));
    expect(told.some((text) => text.includes('does not belong to an approval request'))).toBe(true);

    // The real request still works afterwards.
    await h.click(card, 'approve', 'U2');
    await h.waitForText((text) => text === 'Saved.');
  });
});

describe('the running bot and the body that crashes Bolt 5.1', () => {
  let f: ProcessFixture | undefined;
  afterAll(async () => {
    await f?.close();
  });

  it('answers a signed JSON null and payload=null with 400 and keeps serving', async () => {
    const fixture = await startProcessFixture();
    f = fixture;
    const bot = await fixture.start();
    const url = `${bot.url}/slack/events`;
    for (const [body, contentType] of [
      ['null', 'application/json'],
      ['payload=null', FORM_CONTENT_TYPE],
    ] as const) {
      const response = await signedPost(url, SECRET, { body, contentType });
      expect(response.status).toBe(400);
    }
    fixture.model.enqueue(reply.text('Still here.'));
    await fixture.mention(bot, 'are you there?');
    await fixture.waitForText((text) => text === 'Still here.');
    expect(bot.output()).not.toContain('unhandled rejection');
  });
});
