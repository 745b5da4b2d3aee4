import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ConsoleClient, signInWithLink } from '../../support/console-client.js';
import { reply } from '../../support/fake-openai.js';
import { rows } from '../db-rows.js';
import { approvalIdOf, type Harness, startHarness } from '../harness.js';

const auditRows = (h: Harness) =>
  rows(h.dbPath, 'select kind, actor, payload from audit_events order by seq');

const ADMIN = 'UADMIN';
const AUDITOR = 'UAUDITOR';

describe('web console: deciding from the web', () => {
  let h: Harness;
  let origin: string;
  const env = () => ({ DATABASE_PATH: h.dbPath, ADMIN_USER_IDS: ADMIN, AUDITOR_USER_IDS: AUDITOR });
  beforeEach(async () => {
    h = await startHarness({ env: { ADMIN_USER_IDS: ADMIN, AUDITOR_USER_IDS: AUDITOR } });
    origin = new URL(h.url).origin;
  });
  afterEach(async () => {
    await h.close();
  });

  async function pendingCard(text = 'hello') {
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text } }]),
      reply.text('I added the note.'),
    );
    await h.mention(`please add a note saying ${text}`);
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    return { card, id: approvalIdOf(card) };
  }

  it('an admin signed in with a one-time link approves: every card is updated, the run answers, the audit says web', async () => {
    const { card, id } = await pendingCard();
    const admin = await signInWithLink(origin, env(), ADMIN);
    const list = (await (await admin.get('/console/api/approvals?status=pending')).json()) as {
      items: { id: string; tool: string }[];
    };
    expect(list.items.map((i) => i.id)).toEqual([id]);
    expect(list.items[0]?.tool).toBe('create_note');

    const decided = await admin.postJson(`/console/api/approvals/${id}/decision`, { decision: 'approve' });
    expect(decided.status).toBe(200);
    await h.waitForText((t) => t === 'I added the note.');
    const update = await h.slack.waitForCall(
      'chat.update',
      (c) => c.params.ts === (card.reply as { ts: string }).ts,
    );
    expect(JSON.stringify(update.params.blocks)).toContain(`Approved by <@${ADMIN}>`);

    const again = await admin.postJson(`/console/api/approvals/${id}/decision`, { decision: 'reject' });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe('already_decided');
    const approved = (await auditRows(h)).find((e) => e.kind === 'approval.approved');
    expect(approved?.actor).toBe(ADMIN);
    expect(JSON.parse(String(approved?.payload)).surface).toBe('web');
  });

  it('"Approve for this thread" from the web approves the later calls of the tool in that thread', async () => {
    const { id } = await pendingCard('first');
    const admin = await signInWithLink(origin, env(), ADMIN);
    const page = await (await admin.get(`/console/approvals/${id}`)).text();
    expect(page).toContain('Approve for this thread');
    const decided = await admin.postJson(`/console/api/approvals/${id}/decision`, {
      decision: 'approve',
      standing: true,
    });
    expect(decided.status).toBe(200);
    await h.waitForText((t) => t === 'I added the note.');
    const thread = h.cards()[0]?.params.thread_ts as string;
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'second' } }]),
      reply.text('Second note added.'),
    );
    await h.message('and another', { threadTs: thread });
    await h.waitForText((t) => t === 'Second note added.');
    expect(h.cards()).toHaveLength(1);
    const bad = await admin.postJson(`/console/api/approvals/${id}/decision`, {
      decision: 'reject',
      standing: true,
    });
    expect(bad.status).toBe(400);
  });

  it('a web click racing a Slack click on the same request is one decision', async () => {
    const { card, id } = await pendingCard();
    const admin = await signInWithLink(origin, env(), ADMIN);
    const [web, slack] = await Promise.all([
      admin.postJson(`/console/api/approvals/${id}/decision`, {
        decision: 'reject',
        reason: 'web was first',
      }),
      h.click(card, 'approve', 'U2'),
    ]);
    expect(slack.status).toBe(200);
    // The run went on after the decision, either way: the model read the tool's output.
    await waitForToolOutput(h);
    const decisions = (await auditRows(h)).filter((e) =>
      ['approval.approved', 'approval.rejected'].includes(String(e.kind)),
    );
    expect(decisions).toHaveLength(1);
    // The web answer says which way it went: its own decision, or the one that came first.
    expect([200, 409]).toContain(web.status);
    expect(web.status === 200).toBe(decisions[0]?.kind === 'approval.rejected');
  });

  it('the decide page rejects with a reason through its form, and the run reads it', async () => {
    const { id } = await pendingCard('secret plans');
    const admin = await signInWithLink(origin, env(), ADMIN);
    const pageHtml = await (await admin.get('/console')).text();
    expect(pageHtml).toContain('create_note');
    expect(pageHtml).toContain(`/console/approvals/${id}/decision`);
    const rejected = await admin.postForm(`/console/approvals/${id}/decision`, {
      decision: 'reject',
      reason: 'not today',
    });
    expect(rejected.status).toBe(303);
    expect(rejected.headers.get('location')).toBe(`/console/approvals/${id}?outcome=rejected`);
    await h.slack.waitForCall('chat.update');
    const toolOutput = await waitForToolOutput(h);
    expect(toolOutput).toContain('not today');
  });

  it('a malformed body, a garbage cursor or an unknown status is a clear 4xx and decides nothing', async () => {
    const { id } = await pendingCard();
    const admin = await signInWithLink(origin, env(), ADMIN);
    const garbage = await fetch(`${origin}/console/api/approvals/${id}/decision`, {
      method: 'POST',
      headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrf, 'content-type': 'application/json' },
      body: '{"decision": "approve"',
    });
    expect(garbage.status).toBe(400);
    expect(((await garbage.json()) as { error: { code: string } }).error.code).toBe('bad_request');
    for (const body of [null, [], { decision: 'maybe' }, { decision: 'approve', arguments: 42 }])
      expect((await admin.postJson(`/console/api/approvals/${id}/decision`, body)).status).toBe(400);
    const limited = await admin.get('/console/api/approvals?limit=-5');
    expect(limited.status).toBe(200);
    expect(((await limited.json()) as { items: unknown[] }).items).toHaveLength(1);
    // A cursor this console did not give out, for either list and the decide page: 400, with a sentence.
    const forged = Buffer.from('[1,{"id":1}]').toString('base64url');
    for (const cursor of ['%00abc', '50', 'abc', forged])
      for (const status of ['pending', 'decided']) {
        const refused = await admin.get(`/console/api/approvals?status=${status}&cursor=${cursor}`);
        expect(refused.status).toBe(400);
        expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('bad_cursor');
      }
    expect((await admin.get('/console?cursor=50')).status).toBe(400);
    expect((await admin.get('/console/api/approvals?status=everything')).status).toBe(400);
    const still = (await (await admin.get(`/console/api/approvals/${id}`)).json()) as { status: string };
    expect(still.status).toBe('pending');
  });

  it('without a session the API answers 401 and pages send to sign-in; without the CSRF token nothing is decided', async () => {
    const { id } = await pendingCard();
    expect((await fetch(`${origin}/console/api/me`)).status).toBe(401);
    const pageAnswer = await fetch(`${origin}/console`, { redirect: 'manual' });
    expect(pageAnswer.status).toBe(303);
    expect(pageAnswer.headers.get('location')).toBe('/console/login');

    const admin = await signInWithLink(origin, env(), ADMIN);
    const missing = await admin.postJson(
      `/console/api/approvals/${id}/decision`,
      { decision: 'approve' },
      null,
    );
    expect(missing.status).toBe(403);
    const wrong = await admin.postForm(
      `/console/approvals/${id}/decision`,
      { decision: 'approve' },
      'forged',
    );
    expect(wrong.status).toBe(403);
    const still = (await (await admin.get(`/console/api/approvals/${id}`)).json()) as { status: string };
    expect(still.status).toBe('pending');
    expect(h.cards()).toHaveLength(1);
  });

  it('a person who may not decide a request gets 403 for it, as for an unknown ID, and cannot decide it', async () => {
    const { id } = await pendingCard();
    const stranger: ConsoleClient = await signInWithLink(origin, env(), 'USTRANGER');
    const list = (await (await stranger.get('/console/api/approvals')).json()) as { items: unknown[] };
    expect(list.items).toEqual([]);
    const guessed = await stranger.get(`/console/api/approvals/${id}`);
    const unknown = await stranger.get('/console/api/approvals/apr_000000000000000000000000');
    expect(guessed.status).toBe(403);
    expect(unknown.status).toBe(403);
    expect(await guessed.json()).toEqual(await unknown.json());
    const tried = await stranger.postJson(`/console/api/approvals/${id}/decision`, { decision: 'approve' });
    expect(tried.status).toBe(403);
    const page = await stranger.get(`/console/approvals/${id}`);
    expect(page.status).toBe(403);
    expect(await page.text()).not.toContain('hello');
  });

  it('an auditor reads any request of the workspace but decides none', async () => {
    const { id } = await pendingCard();
    const auditor = await signInWithLink(origin, env(), AUDITOR);
    const me = (await (await auditor.get('/console/api/me')).json()) as { roles: unknown };
    expect(me.roles).toEqual({ admin: false, auditor: true });
    expect(
      ((await (await auditor.get('/console/api/approvals')).json()) as { items: unknown[] }).items,
    ).toEqual([]);
    const detail = await auditor.get(`/console/api/approvals/${id}`);
    expect(detail.status).toBe(200);
    expect(await detail.json()).toMatchObject({ id, mayDecide: false, tool: 'create_note' });
    const page = await (await auditor.get(`/console/approvals/${id}`)).text();
    expect(page).toContain('hello');
    expect(page).not.toContain('/decision');
    const tried = await auditor.postJson(`/console/api/approvals/${id}/decision`, { decision: 'approve' });
    expect(tried.status).toBe(403);
  });

  it('a one-time link signs in once; sign-out and revoking every session end sessions', async () => {
    const admin = await signInWithLink(origin, env(), ADMIN);
    expect((await admin.get('/console/api/me')).status).toBe(200);
    const other = await signInWithLink(origin, env(), ADMIN);
    const out = await admin.postForm('/console/logout', {});
    expect(out.status).toBe(303);
    expect((await admin.get('/console/api/me')).status).toBe(401);
    expect((await other.get('/console/api/me')).status).toBe(200);

    const { runConsoleCli } = await import('../../../src/cli/console-cli.js');
    const lines: string[] = [];
    const code = await runConsoleCli(['sessions', '--revoke-all'], env(), {
      out: (l) => lines.push(l),
      err: (l) => lines.push(l),
    });
    expect(code).toBe(0);
    expect(lines.join('\n')).toContain('Signed out 1 console session.');
    expect((await other.get('/console/api/me')).status).toBe(401);
    const kinds = (await auditRows(h)).map((e) => e.kind);
    expect(kinds.filter((k) => k === 'console.link_issued')).toHaveLength(2);
    expect(kinds.filter((k) => k === 'console.signed_in')).toHaveLength(2);
    expect(kinds).toContain('console.signed_out');
    expect(kinds).toContain('console.sessions_revoked');
  });
});

async function waitForToolOutput(h: Harness): Promise<string> {
  const { waitUntil } = await import('../../support/wait.js');
  return waitUntil(
    () => h.model.requests.at(1)?.messages.find((m) => m.role === 'tool')?.content as string | undefined,
    { timeoutMs: 10_000, message: 'expected the rejection to reach the model' },
  );
}
