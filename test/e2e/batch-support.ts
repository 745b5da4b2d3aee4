import { ACTION_IDS } from '../../src/slack/ids.js';
import { blockActionsPayload } from '../support/slack-payloads.js';
import { postInteraction } from '../support/slack-requests.js';
import { type Harness, SECRET } from './harness.js';

/** A click on a batch button of the Home tab by `user`, with `selected` ticked in the view's state. */
export function clickHomeBatch(
  h: Pick<Harness, 'url'>,
  action: 'batchApprove' | 'batchReject',
  selected: string[],
  user: string,
): Promise<Response> {
  const {
    channel: _c,
    message: _m,
    ...payload
  } = blockActionsPayload({
    userId: user,
    channelId: 'unused',
    messageTs: 'unused',
    actionId: ACTION_IDS[action],
    value: '',
    blockId: 'batch-actions',
  });
  const values = Object.fromEntries(
    selected.map((id) => [
      `pending-${id}`,
      {
        [ACTION_IDS.select]: {
          type: 'checkboxes',
          selected_options: [{ text: { type: 'mrkdwn', text: 'Select' }, value: id }],
        },
      },
    ]),
  );
  return postInteraction(h.url, SECRET, {
    ...payload,
    container: { type: 'view', view_id: 'VHOME' },
    view: { id: 'VHOME', type: 'home', blocks: [], state: { values } },
  });
}
