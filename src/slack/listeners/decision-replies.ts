import type { BlockAction, ButtonAction } from '@slack/bolt';
import type { ApprovalRecord } from '../../approvals/approval.js';
import type { ApprovalService, DecisionResult } from '../../approvals/approval-service.js';
import type { ArgumentEditService } from '../../approvals/argument-edit-service.js';
import type { ApprovalClick, RequestLedger } from '../../approvals/click-inbox.js';
import type { RunWork } from '../../conversations/run-work.js';
import type { CardLocation } from '../../conversations/surface-ports.js';
import { describeError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { decodeApprovalButtonValue } from '../button-value.js';
import { slackDate } from '../mrkdwn.js';
import type { SlackSurface } from '../slack-surface.js';

export type { ApprovalClick };

/** What deciding from Slack needs, in whichever thread it runs. */
export interface DecisionDeps {
  approvals: ApprovalService;
  /** Cards, the run and App Home after a decision (in this thread, or in a worker). */
  work: Pick<RunWork, 'settled'>;
  /** Replies to the person who clicked (their own client, which never waits out a rate limit). */
  surface: Pick<SlackSurface, 'postEphemeral'>;
  logger: Logger;
  /** A message in the app's DM with this person: the reply to a click from App Home, which has no channel. */
  directMessage?: (userId: string, text: string) => Promise<void>;
  /** Where accepted clicks are kept until decided: told when one is. */
  ledger: Pick<RequestLedger, 'clickDecided'>;
}

export interface ActionListenerDeps extends DecisionDeps {
  edits: ArgumentEditService;
  /** Signs what decision forms carry in their metadata (see modal-metadata.ts). */
  modalKey: Buffer;
  /** Where an Approve click is decided after its ack (this thread, or a worker). */
  clicks: ClickWork;
}

/** Where clicks are decided once acknowledged. */
export interface ClickWork {
  /** `key`: the click's row in the request ledger, already committed; marked decided once it is. */
  click(click: ApprovalClick, key: string): void;
}

export const UNKNOWN_BUTTON =
  'This button does not belong to an approval request I know of, so nothing happened.';

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
    channelId: body.channel?.id ?? body.container?.channel_id,
    messageTs: body.message?.ts ?? body.container?.message_ts,
    threadTs: body.message?.thread_ts ?? body.container?.thread_ts,
  };
}

/**
 * A private reply to the person who clicked, in the card's thread (in the app's DM for a click in App Home);
 * a failure to send it is only logged.
 */
export function ephemeralTo(
  deps: DecisionDeps,
  click: Pick<ApprovalClick, 'channelId' | 'threadTs' | 'userId'>,
): (text: string) => Promise<void> {
  const { channelId, threadTs, userId } = click;
  return (text) =>
    (channelId
      ? deps.surface.postEphemeral(channelId, userId, text, threadTs)
      : (deps.directMessage?.(userId, text) ?? Promise.resolve())
    ).catch((error: unknown) => {
      deps.logger.warn('reply to a click failed', { channelId, error: describeError(error) });
    });
}

/**
 * Decides an acknowledged Approve click from the button's approval id and the verified clicker alone, then
 * tells the person why nothing changed, or hands the change to the work that follows. `taken` is called once
 * the click is decided or refused (before any reply), so whoever handed it over can forget it; the ledger row
 * under `key` is then marked decided. A click whose decision could not be recorded keeps its row undecided, so
 * it is picked up again (see `RequestLedger.takeOverdueClicks`).
 */
export async function decideClick(
  deps: DecisionDeps,
  click: ApprovalClick,
  key: string,
  taken: () => void = () => {},
): Promise<void> {
  const tell = ephemeralTo(deps, click);
  const decoded = decodeApprovalButtonValue(click.value);
  if (!decoded.ok || !click.teamId) {
    taken();
    await markDecided(deps, key);
    await tell(UNKNOWN_BUTTON);
    return;
  }
  let result: DecisionResult;
  try {
    result = await deps.approvals.decide({
      approvalId: decoded.approvalId,
      userId: click.userId,
      teamId: click.teamId,
      channelId: click.channelId,
      vote: 'approve',
      reason: null,
      standing: click.standing,
    });
  } catch (error) {
    taken();
    // Nothing was recorded (the decision is one transaction): say so, so the person can click again.
    deps.logger.error('decision could not be recorded', {
      approvalId: decoded.approvalId,
      error: describeError(error),
    });
    await tell(
      'I could not record your decision because of a problem on my side; nothing changed, please click again.',
    );
    return;
  }
  taken();
  await markDecided(deps, key);
  await applyResult(deps, result, click, tell, click.standing);
}

/** Marks a click's ledger row decided; a failure only means it is decided again later (a no-op: already decided). */
async function markDecided(deps: DecisionDeps, key: string): Promise<void> {
  try {
    await deps.ledger.clickDecided(key);
  } catch (error) {
    deps.logger.warn('a decided click could not be marked decided', { error: describeError(error) });
  }
}

/**
 * Clicks decided in this thread, after the requests already waiting were read and acked: under a burst of
 * clicks every ack then leaves before the decisions' synchronous database work.
 */
export function localClicks(deps: DecisionDeps): ClickWork {
  return {
    click: (click, key) =>
      setImmediate(() => {
        decideClick(deps, click, key).catch((error: unknown) =>
          deps.logger.error('click could not be decided', { error: describeError(error) }),
        );
      }),
  };
}

/** The card a click or a form came from, as the payload names it (never trusted over what is stored). */
export interface ClickedCard {
  channelId: string | undefined;
  messageTs: string | undefined;
  threadTs: string | undefined;
}

/**
 * Where to update the card besides the stored location: nowhere when the card's location is stored (a payload
 * naming another message could otherwise overwrite someone else's card); else the clicked message, and only
 * when it is in the approval's own channel and thread (a card posted just before a crash, never recorded).
 */
function cardFallback(approval: ApprovalRecord, clicked: ClickedCard | undefined): CardLocation | undefined {
  if (!clicked || approval.messageTs) return undefined;
  const { channelId, messageTs, threadTs } = clicked;
  if (!channelId || !messageTs) return undefined;
  return channelId === approval.channelId && threadTs === approval.threadTs
    ? { channelId, messageTs }
    : undefined;
}

/** Tells the person why nothing changed, or hands what changed to the work that follows (cards, run, App Home). */
export async function applyResult(
  deps: DecisionDeps,
  result: DecisionResult,
  clicked: ClickedCard | undefined,
  tell: (text: string) => Promise<void>,
  standing = false,
): Promise<void> {
  const fallback = result.ok ? cardFallback(result.approval, clicked) : undefined;
  const where = fallback ? { fallback } : {};
  switch (result.kind) {
    case 'not_found':
      return tell(UNKNOWN_BUTTON);
    case 'not_allowed':
      // Past the per-person limit of refusals: no reply either.
      return result.quiet ? undefined : tell(result.message);
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
