import type { BlockAction, ButtonAction } from '@slack/bolt';
import type { ApprovalClick } from '../../approvals/click-inbox.js';
import { ACTION_IDS, DECISION_ACTION } from '../ids.js';
import { malformedIdsIn } from '../payload-ids.js';

export type { ApprovalClick };

/** Where clicks are decided once acknowledged: this thread, or a worker thread. */
export interface ClickWork {
  /** `key`: the click's row in the request ledger, already committed; marked decided once it is. */
  click(click: ApprovalClick, key: string): void;
}

/** Where a button click came from, as plain data. */
export function clickOf(
  body: BlockAction<ButtonAction>,
  action: ButtonAction,
  standing: boolean,
): ApprovalClick {
  return {
    value: action.value,
    standing,
    userId: body.user.id,
    teamId: body.team?.id ?? body.user.team_id,
    enterpriseId: enterpriseIdOf(body),
    channelId: body.channel?.id ?? body.container?.channel_id,
    messageTs: body.message?.ts ?? body.container?.message_ts,
    threadTs: body.message?.thread_ts ?? body.container?.thread_ts,
  };
}

/** The Enterprise Grid organisation a signed interaction names (checked by `malformedIdsIn`); undefined outside Grid. */
export function enterpriseIdOf(body: {
  enterprise?: { id: string } | null | undefined;
  team?: { enterprise_id?: string | undefined } | null | undefined;
}): string | undefined {
  return body.enterprise?.id ?? body.team?.enterprise_id ?? undefined;
}

/**
 * The Approve (or Approve for this thread) click a parsed interactivity payload carries, or undefined when it is
 * anything else: another action, several actions, or ids that `rejectMalformedIds` would refuse. For the request
 * guard, which answers such a click ahead of Bolt (HTTP mode); built by `clickOf`, as Bolt's action listener
 * builds it (Socket Mode).
 */
export function approvalClickIn(body: object): ApprovalClick | undefined {
  if (!('type' in body) || body.type !== 'block_actions') return undefined;
  const actions = 'actions' in body ? body.actions : undefined;
  if (!Array.isArray(actions) || actions.length !== 1) return undefined;
  const action: unknown = actions[0];
  if (action === null || typeof action !== 'object') return undefined;
  if (!('type' in action) || action.type !== 'button') return undefined;
  const actionId = 'action_id' in action ? action.action_id : undefined;
  if (typeof actionId !== 'string' || !DECISION_ACTION.test(actionId)) return undefined;
  if (malformedIdsIn(body) !== undefined) return undefined;
  // Checked above: a block_actions body with well-formed ids and one button action.
  const click = body as BlockAction<ButtonAction>;
  return clickOf(click, action as ButtonAction, actionId === ACTION_IDS.approveThread);
}
