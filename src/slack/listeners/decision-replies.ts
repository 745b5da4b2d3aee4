import type { BlockAction, ButtonAction } from '@slack/bolt';
import type { ApprovalRecord } from '../../approvals/approval.js';
import type { ApprovalService, DecisionResult } from '../../approvals/approval-service.js';
import type { ArgumentEditService } from '../../approvals/argument-edit-service.js';
import type { CardLocation } from '../../conversations/ports.js';
import type { RunWork } from '../../conversations/run-work.js';
import { describeError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { slackDate } from '../mrkdwn.js';
import type { SlackSurface } from '../slack-surface.js';

export interface ActionListenerDeps {
  approvals: ApprovalService;
  edits: ArgumentEditService;
  /** Cards, the run and App Home after a decision (in this thread, or in a worker). */
  work: Pick<RunWork, 'settled'>;
  /** Replies to the person who clicked (their own client, which never waits out a rate limit). */
  surface: Pick<SlackSurface, 'postEphemeral'>;
  logger: Logger;
  /** A message in the app's DM with this person: the reply to a click from App Home, which has no channel. */
  directMessage?: (userId: string, text: string) => Promise<void>;
}

export const UNKNOWN_BUTTON =
  'This button does not belong to an approval request I know of, so nothing happened.';

/**
 * A private reply to the person who clicked, in the card's thread (in the app's DM for a click in App Home);
 * a failure to send it is only logged.
 */
export function ephemeralTo(
  deps: ActionListenerDeps,
  body: BlockAction<ButtonAction>,
): (text: string) => Promise<void> {
  const channelId = body.channel?.id ?? body.container?.channel_id;
  const threadTs = body.message?.thread_ts ?? body.container?.thread_ts;
  return (text) =>
    (channelId
      ? deps.surface.postEphemeral(channelId, body.user.id, text, threadTs)
      : (deps.directMessage?.(body.user.id, text) ?? Promise.resolve())
    ).catch((error: unknown) => {
      deps.logger.warn('reply to a click failed', { channelId, error: describeError(error) });
    });
}

/** Tells the person why nothing changed, or hands what changed to the work that follows (cards, run, App Home). */
export async function applyResult(
  deps: ActionListenerDeps,
  result: DecisionResult,
  fallback: CardLocation | undefined,
  tell: (text: string) => Promise<void>,
  standing = false,
): Promise<void> {
  const where = fallback ? { fallback } : {};
  switch (result.kind) {
    case 'not_found':
      return tell(UNKNOWN_BUTTON);
    case 'not_allowed':
      return tell(result.message);
    case 'already_voted':
      return tell('You have already voted on this request; it needs approvals from other people.');
    case 'already_decided':
      return tell(alreadyDecided(result.approval));
    case 'counted':
      deps.work.settled({ kind: 'counted', approval: result.approval, approvers: result.approvers }, where);
      return;
    case 'decided':
      deps.work.settled(
        { kind: 'decided', approval: result.approval, runClaimed: result.runClaimed, standing },
        where,
      );
  }
}

export function alreadyDecided(approval: ApprovalRecord): string {
  const by = (approval.decidedBy ?? '')
    .split(',')
    .filter(Boolean)
    .map((id) => `<@${id}>`)
    .join(', ');
  const when = approval.decidedAt ? ` ${slackDate(approval.decidedAt)}` : '';
  switch (approval.status) {
    case 'expired':
      return 'This request expired before anyone decided it.';
    case 'cancelled':
      return `This request was cancelled: ${approval.reason ?? 'no reason given'}.`;
    case 'rejected':
      return `This request was already rejected by ${by || 'someone'}${when}.`;
    default:
      return `This request was already approved by ${by || 'someone'}${when}.`;
  }
}
