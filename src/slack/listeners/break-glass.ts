import type { App, BlockAction, ButtonAction, ViewSubmitAction } from '@slack/bolt';
import { z } from 'zod';
import type { ApprovalService, DecisionResult } from '../../approvals/approval-service.js';
import type { BreakGlassReviews } from '../../approvals/break-glass-reviews.js';
import type { RunWork } from '../../conversations/run-work.js';
import { describeError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { buildBreakGlassModal, buildBreakGlassReview } from '../blocks/break-glass.js';
import { decodeApprovalButtonValue } from '../button-value.js';
import { clickOf } from '../clicks/click.js';
import type { ClickReply } from '../clicks/click-reply.js';
import { applyResult } from '../clicks/decision-outcome.js';
import { refusalText, UNKNOWN_BUTTON } from '../clicks/refusals.js';
import { ACTION_IDS, CALLBACK_IDS, MODAL_INPUTS } from '../ids.js';
import { decodeModalMetadata, encodeModalMetadata } from '../modal-metadata.js';

export interface BreakGlassListenerDeps {
  approvals: Pick<ApprovalService, 'check' | 'decide'>;
  reviews: Pick<BreakGlassReviews, 'acknowledge'>;
  work: Pick<RunWork, 'settled'>;
  reply: ClickReply;
  modalKey: Buffer;
  logger: Logger;
}

const inputValue = z.object({ value: z.string().nullish() });

/**
 * Break glass (App Home, admins only: see docs/policy.md): the button opens the justification form once the core
 * allows this person to break glass on the request; the submission decides through `ApprovalService` like any
 * approval. Acknowledge (on the review card) records another admin's review and updates the clicked card.
 */
export function registerBreakGlassListeners(app: App, deps: BreakGlassListenerDeps): void {
  app.action<BlockAction<ButtonAction>>(ACTION_IDS.breakGlass, async ({ ack, body, action, client }) => {
    await ack();
    const click = clickOf(body, action, false);
    const decoded = decodeApprovalButtonValue(action.value);
    const checked =
      decoded.ok && click.teamId
        ? await deps.approvals.check({
            approvalId: decoded.approvalId,
            userId: click.userId,
            teamId: click.teamId,
            channelId: undefined,
            vote: 'approve',
            breakGlass: { justification: '' },
          })
        : ({ ok: false, kind: 'not_found' } as const);
    if (!checked.ok) {
      if (!(checked.kind === 'not_allowed' && checked.quiet))
        await deps.reply.tell(click, refusalText(checked));
      return;
    }
    const metadata = encodeModalMetadata(
      { approvalId: checked.approval.id, userId: click.userId, channelId: undefined },
      deps.modalKey,
    );
    try {
      await client.views.open({
        trigger_id: body.trigger_id,
        view: buildBreakGlassModal(metadata, checked.approval),
      });
    } catch (error) {
      deps.logger.warn('break-glass form could not be opened', { error: describeError(error) });
      await deps.reply.tell(
        click,
        'I could not open the form for this request; please click the button again.',
      );
    }
  });

  app.view<ViewSubmitAction>(CALLBACK_IDS.breakGlassModal, async ({ ack, body, view }) => {
    const metadata = decodeModalMetadata(view.private_metadata, deps.modalKey, body.user.id);
    const teamId = body.team?.id ?? body.user.team_id;
    const { blockId, actionId } = MODAL_INPUTS.justification;
    const typed = inputValue.safeParse(view.state.values[blockId]?.[actionId]);
    let result: DecisionResult;
    try {
      result =
        metadata && teamId
          ? await deps.approvals.decide({
              approvalId: metadata.approvalId,
              userId: body.user.id,
              teamId,
              channelId: undefined,
              vote: 'approve',
              reason: null,
              breakGlass: { justification: typed.success ? (typed.data.value ?? '') : '' },
            })
          : { ok: false, kind: 'not_found' };
    } catch (error) {
      deps.logger.error('break-glass decision could not be recorded', { error: describeError(error) });
      result = {
        ok: false,
        kind: 'not_allowed',
        message: 'I could not record your decision; please submit again.',
      };
    }
    await answer(deps, ack, result.ok ? undefined : { [blockId]: refusalText(result) });
    if (result.ok) await applyResult(deps.work, result, undefined, async () => undefined);
  });

  app.action<BlockAction<ButtonAction>>(
    ACTION_IDS.acknowledgeBreakGlass,
    async ({ ack, body, action, client }) => {
      await ack();
      const click = clickOf(body, action, false);
      const decoded = decodeApprovalButtonValue(action.value);
      const result =
        decoded.ok && click.teamId
          ? await deps.reviews.acknowledge({
              approvalId: decoded.approvalId,
              userId: click.userId,
              teamId: click.teamId,
            })
          : ({ ok: false, kind: 'not_found' } as const);
      if (result.ok === false && result.kind !== 'already_acknowledged') {
        await deps.reply.tell(click, result.kind === 'not_found' ? UNKNOWN_BUTTON : result.message);
        return;
      }
      if (!click.channelId || !click.messageTs) return;
      // The clicked copy of the review card shows who acknowledged (a copy acknowledged elsewhere catches up here).
      await client.chat
        .update({ channel: click.channelId, ts: click.messageTs, ...buildBreakGlassReview(result.approval) })
        .catch((error: unknown) => {
          deps.logger.warn('break-glass review card could not be updated', { error: describeError(error) });
        });
    },
  );
}

type ModalAck = (response?: { response_action: 'errors'; errors: Record<string, string> }) => Promise<void>;

/** Acks the submission; a late or failed ack (Slack stops waiting after 3 s) is logged, never thrown. */
async function answer(deps: BreakGlassListenerDeps, ack: ModalAck, errors?: Record<string, string>) {
  try {
    await (errors ? ack({ response_action: 'errors', errors }) : ack());
  } catch (error) {
    deps.logger.warn('break-glass form could not be acknowledged', { error: describeError(error) });
  }
}
