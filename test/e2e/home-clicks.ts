import type { Stores } from '../../src/db/stores.js';
import { ACTION_IDS } from '../../src/slack/ids.js';
import { blockActionsPayload } from '../support/slack-payloads.js';
import { postInteraction } from '../support/slack-requests.js';
import { type Harness, SECRET } from './harness.js';

/**
 * A click on a button of the Home tab by `user`: its container is the view (with `state`, the ticked boxes);
 * there is no channel and no message.
 */
export function clickInHome(
  h: Pick<Harness, 'url'>,
  user: string,
  button: { actionId: string; value: string; blockId?: string },
  state: Record<string, unknown> = {},
): Promise<Response> {
  const {
    channel: _c,
    message: _m,
    ...payload
  } = blockActionsPayload({ userId: user, channelId: 'unused', messageTs: 'unused', ...button });
  return postInteraction(h.url, SECRET, {
    ...payload,
    container: { type: 'view', view_id: 'VHOME' },
    view: { id: 'VHOME', type: 'home', blocks: [], state: { values: state } },
  });
}

/** A click on a batch button of the Home tab by `user`, with `selected` ticked in the view's state. */
export function clickHomeBatch(
  h: Pick<Harness, 'url'>,
  action: 'batchApprove' | 'batchReject',
  selected: string[],
  user: string,
): Promise<Response> {
  const ticked = Object.fromEntries(
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
  return clickInHome(h, user, { actionId: ACTION_IDS[action], value: '', blockId: 'batch-actions' }, ticked);
}

/** The stores of a slow database for `BotOverrides.stores`: each vote commits `ms` after it is asked for. */
export function slowVotes(ms: number, committed: () => void): (stores: Stores) => Stores {
  return (stores) => ({
    ...stores,
    approvals: {
      ...stores.approvals,
      vote: async (...args: Parameters<typeof stores.approvals.vote>) => {
        await new Promise((resolve) => setTimeout(resolve, ms));
        const result = await stores.approvals.vote(...args);
        committed();
        return result;
      },
    },
  });
}
