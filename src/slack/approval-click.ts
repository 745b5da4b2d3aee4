import type { BlockAction, ButtonAction } from '@slack/bolt';
import { ACTION_IDS, DECISION_ACTION } from './ids.js';
import { type ApprovalClick, clickOf } from './listeners/decision-replies.js';
import { malformedIdsIn } from './payload-ids.js';

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
