import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { AcceptedRequest, ApprovalClick } from '../../src/approvals/click-inbox.js';
import { silentLogger } from '../../src/logger.js';
import { groupCommit } from '../../src/slack/accepted-requests.js';
import { approvalClickIn } from '../../src/slack/clicks/click.js';
import { ACTION_IDS } from '../../src/slack/ids.js';
import { guardSlackRequests } from '../../src/slack/request-guard.js';
import { blockActionsPayload } from '../support/slack-payloads.js';
import { FORM_CONTENT_TYPE, postInteraction, signedPost } from '../support/slack-requests.js';

const SECRET = 'early-clicks-secret';
const VALUE = 'apr_0123456789abcdef0123';

function click(overrides: Partial<Parameters<typeof blockActionsPayload>[0]> = {}) {
  return blockActionsPayload({
    userId: 'U123',
    channelId: 'C123',
    messageTs: '1700000000.000100',
    threadTs: '1700000000.000001',
    actionId: ACTION_IDS.approve,
    value: VALUE,
    ...overrides,
  });
}

/**
 * The request guard in front of a stand-in for Bolt that answers 299: which requests the guard answers itself
 * as Approve clicks (200, handed over), and which it leaves to Bolt.
 */
async function guarded(accept?: (request: AcceptedRequest) => Promise<boolean>) {
  const taken: ApprovalClick[] = [];
  let toBolt = 0;
  const listener = guardSlackRequests(
    (req, res) => {
      toBolt++;
      req.resume();
      res.writeHead(299);
      res.end();
    },
    {
      endpoint: '/slack/events',
      signingSecret: SECRET,
      bodyLimit: 1024 * 1024,
      logger: silentLogger,
      ...(accept ? { requests: { accept, forget: async () => {} } } : {}),
      takeEarly: approvalClickIn,
      handOver: (found) => taken.push(found),
    },
  );
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slack/events`;
  return { server, url, taken, toBolt: () => toBolt };
}

describe('Approve clicks answered ahead of Bolt', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  it('acks a signed Approve click itself and hands over the click as the listener would', async () => {
    const rig = await guarded();
    server = rig.server;
    const approve = await postInteraction(rig.url, SECRET, click());
    const standing = await postInteraction(rig.url, SECRET, click({ actionId: ACTION_IDS.approveThread }));
    expect([approve.status, standing.status]).toEqual([200, 200]);
    expect(await approve.text()).toBe('');
    expect(rig.toBolt()).toBe(0);
    expect(rig.taken).toEqual([
      {
        value: VALUE,
        standing: false,
        userId: 'U123',
        teamId: 'T1',
        channelId: 'C123',
        messageTs: '1700000000.000100',
        threadTs: '1700000000.000001',
      },
      expect.objectContaining({ value: VALUE, standing: true }),
    ]);
  });

  it('leaves to Bolt (which refuses them) clicks that are forged, stale or from the future', async () => {
    const rig = await guarded();
    server = rig.server;
    const body = new URLSearchParams({ payload: JSON.stringify(click()) }).toString();
    const forged = await signedPost(rig.url, 'another-secret', { body, contentType: FORM_CONTENT_TYPE });
    const stale = await signedPost(rig.url, SECRET, {
      body,
      contentType: FORM_CONTENT_TYPE,
      timestamp: Math.floor(Date.now() / 1000) - 6 * 60,
    });
    const future = await signedPost(rig.url, SECRET, {
      body,
      contentType: FORM_CONTENT_TYPE,
      timestamp: Math.floor(Date.now() / 1000) + 6 * 60,
    });
    const [truncated, unversioned] = await Promise.all(
      ['v0=abc', 'v1=0123'].map((signature) =>
        signedPost(rig.url, SECRET, {
          body,
          contentType: FORM_CONTENT_TYPE,
          headers: { 'x-slack-signature': signature },
        }),
      ),
    );
    expect([forged, stale, future, truncated, unversioned].map((r) => r?.status)).toEqual([
      299, 299, 401, 299, 299,
    ]);
    expect(rig.toBolt()).toBe(4);
    expect(rig.taken).toEqual([]);
  });

  it('leaves every other request to Bolt: other buttons, several actions, malformed ids', async () => {
    const rig = await guarded();
    server = rig.server;
    const twoActions = click();
    twoActions.actions = [...(twoActions.actions as unknown[]), ...(twoActions.actions as unknown[])];
    const requests = [
      click({ actionId: ACTION_IDS.reject }),
      click({ actionId: ACTION_IDS.edit }),
      click({ actionId: ACTION_IDS.viewArguments }),
      twoActions,
      click({ userId: 'U2><!channel' }),
      click({ teamId: 'local' }),
      click({ channelId: 'C1', messageTs: ['1700000000.000100'] as unknown as string }),
      { ...click(), type: 'view_submission' },
    ];
    const statuses = [];
    for (const payload of requests) statuses.push((await postInteraction(rig.url, SECRET, payload)).status);
    expect(statuses).toEqual(requests.map(() => 299));
    expect(rig.taken).toEqual([]);
  });

  it('records a click before its ack: a replay is answered 200 and not handed over, a failed record is answered 503', async () => {
    const recorded: AcceptedRequest[] = [];
    let failing = false;
    const rig = await guarded(async (request) => {
      if (failing) throw new Error('database down');
      if (recorded.some((r) => r.key === request.key)) return false;
      recorded.push(request);
      return true;
    });
    server = rig.server;
    const body = new URLSearchParams({ payload: JSON.stringify(click()) }).toString();
    const timestamp = Math.floor(Date.now() / 1000);
    const send = () => signedPost(rig.url, SECRET, { body, contentType: FORM_CONTENT_TYPE, timestamp });
    expect((await send()).status).toBe(200);
    expect((await send()).status).toBe(200);
    expect(rig.taken).toHaveLength(1);
    expect(recorded).toEqual([{ key: expect.stringMatching(/^sig:[0-9a-f]{64}$/), click: rig.taken[0] }]);
    failing = true;
    expect((await postInteraction(rig.url, SECRET, click())).status).toBe(503);
    expect((await postInteraction(rig.url, SECRET, click({ actionId: ACTION_IDS.reject }))).status).toBe(503);
    expect(rig.taken).toHaveLength(1);
    expect(rig.toBolt()).toBe(0);
  });
});

describe('the group commit of accepted requests', () => {
  it('records clicks that arrive together in one transaction, and each learns whether it was new', async () => {
    const groups: string[][] = [];
    const seen = new Set<string>();
    const accept = groupCommit({
      async accept(requests) {
        groups.push(requests.map((r) => r.key));
        return requests.map((r) => !seen.has(r.key) && Boolean(seen.add(r.key)));
      },
    });
    const first = await Promise.all(['a', 'b', 'c', 'a'].map((key) => accept({ key })));
    expect(first).toEqual([true, true, true, false]);
    expect(await accept({ key: 'b' })).toBe(false);
    expect(groups).toEqual([['a', 'b', 'c', 'a'], ['b']]);
  });
});
