import type { SlackCall } from '../support/fake-slack.js';
import { isRecord } from '../support/json-value.js';
import { viewSubmissionPayload } from '../support/slack-payloads.js';
import { postInteraction } from '../support/slack-requests.js';
import { sleep } from '../support/wait.js';
import { approvalIdOf, cardClick, isApprovalCard, SECRET } from './harness.js';
import type { ProcessFixture } from './process-fixture.js';
import type { Fleet } from './rolling-fleet.js';

/** Who clicks every card. */
export const CLICKER = 'U2';

export const events = (url: string) => `${url}/slack/events`;

export type Decision = 'approve' | 'reject';
export interface Conversation {
  k: number;
  kind: 'note' | 'think';
  expected: string;
}

export const decisionOf = (k: number): Decision => (k % 3 === 2 ? 'reject' : 'approve');

/** Clicks each card as it appears (but `held`), spread over the slots; `count()` is how many it clicked. */
export function startClicker(
  f: ProcessFixture,
  held: Set<string>,
  decide: (card: SlackCall, slot: number) => Promise<void>,
): { count(): number; stop(): Promise<void> } {
  const clicked = new Set<string>(held);
  const decisions: Promise<void>[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      for (const card of f.slack.callsTo('chat.postMessage').filter(isApprovalCard)) {
        const id = approvalIdOf(card);
        if (clicked.has(id)) continue;
        clicked.add(id);
        decisions.push(decide(card, clicked.size));
      }
      await sleep(50);
    }
  })();
  return {
    count: () => clicked.size - held.size,
    async stop() {
      running = false;
      await loop;
      await Promise.all(decisions);
    },
  };
}

/** Clicks the card's button for its conversation's decision; a Reject then submits the form it opened. */
export async function decideCard(
  f: ProcessFixture,
  fleet: Fleet,
  card: SlackCall,
  slot: number,
  conversations: Map<string, Conversation>,
): Promise<void> {
  const decision = decisionOf(conversations.get(String(card.params.thread_ts))?.k ?? -1);
  await fleet.deliver(slot, (url) =>
    postInteraction(events(url), SECRET, cardClick(card, decision, CLICKER)),
  );
  await afterClick(f, fleet, card, slot + 1, conversations);
}

/** After a Reject click was answered: the form it opened, submitted with a reason to the next process. */
export async function afterClick(
  f: ProcessFixture,
  fleet: Fleet,
  card: SlackCall,
  slot: number,
  conversations: Map<string, Conversation>,
): Promise<void> {
  if (decisionOf(conversations.get(String(card.params.thread_ts))?.k ?? -1) !== 'reject') return;
  const id = approvalIdOf(card);
  const opened = await f.slack.waitForCall(
    'views.open',
    (c) => JSON.stringify(c.params.view).includes(id),
    15_000,
  );
  const view = opened.params.view;
  if (!isRecord(view) || typeof view.private_metadata !== 'string' || typeof view.callback_id !== 'string')
    throw new Error('views.open without a modal');
  const { private_metadata: privateMetadata, callback_id: callbackId } = view;
  await fleet.deliver(slot, (url) =>
    postInteraction(
      events(url),
      SECRET,
      viewSubmissionPayload({
        userId: CLICKER,
        callbackId,
        privateMetadata,
        values: { reason: { reason_input: { type: 'plain_text_input', value: 'not now' } } },
      }),
    ),
  );
}
