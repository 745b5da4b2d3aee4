import type { App, BlockAction, ButtonAction, ViewSubmitAction } from '@slack/bolt';
import { z } from 'zod';
import type { ApprovalService } from '../../approvals/approval-service.js';
import { type BatchRequest, decideBatch } from '../../conversations/batch-decisions.js';
import type { RunWork } from '../../conversations/run-work.js';
import { describeError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import {
  batchSummary,
  decodeBatchMetadata,
  encodeBatchMetadata,
  NOTHING_SELECTED,
  selectedApprovals,
} from '../batch-selection.js';
import { buildBatchRejectModal, MAX_REASON_LENGTH } from '../blocks/batch-blocks.js';
import type { ClickReply } from '../clicks/click-reply.js';
import { ACTION_IDS, CALLBACK_IDS, MODAL_INPUTS } from '../ids.js';

/** What App Home's batch buttons and their form need. */
export interface BatchListenerDeps {
  approvals: Pick<ApprovalService, 'decide'>;
  /** Cards, the run and App Home after each decision (in this thread, or in a worker). */
  work: Pick<RunWork, 'settled'>;
  /** Answers the person: from App Home, a direct message. */
  reply: ClickReply;
  logger: Logger;
}

const reasonInput = z.object({ value: z.string().nullish() });

/**
 * App Home's batch decisions. A checkbox tick is only acknowledged (the selection is read from the view's state
 * when a batch button is clicked). Approve selected decides at once; Reject selected opens one form whose reason
 * goes to every request. Each request is decided on its own by `decideBatch`, from no channel, as a click in
 * Home is; the person is told in a direct message what was decided and which were skipped, and why.
 */
export function registerBatchListeners(app: App, deps: BatchListenerDeps): void {
  app.action({ action_id: ACTION_IDS.select }, async ({ ack }) => {
    await ack();
  });

  app.action<BlockAction<ButtonAction>>(
    { action_id: new RegExp(`^(${ACTION_IDS.batchApprove}|${ACTION_IDS.batchReject})$`) },
    async ({ ack, body, action, client }) => {
      const who = { userId: body.user.id, channelId: undefined, threadTs: undefined };
      const teamId = body.team?.id ?? body.user.team_id;
      const ids = selectedApprovals(body.view?.state);
      if (ids.length > 0 && teamId && action.action_id === ACTION_IDS.batchApprove)
        return decideAndTell(deps, ack, {
          approvalIds: ids,
          userId: who.userId,
          teamId,
          vote: 'approve',
          reason: null,
        });
      await ack();
      if (ids.length === 0 || !teamId) return deps.reply.tell(who, NOTHING_SELECTED);
      try {
        await client.views.open({
          trigger_id: body.trigger_id,
          view: buildBatchRejectModal(encodeBatchMetadata(ids), ids.length),
        });
      } catch (error) {
        deps.logger.warn('batch reject form could not be opened', { error: describeError(error) });
        await deps.reply.tell(who, 'I could not open the form; please click Reject selected again.');
      }
    },
  );

  app.view<ViewSubmitAction>(CALLBACK_IDS.batchRejectModal, async ({ ack, body, view }) => {
    const typed = reasonInput.safeParse(
      view.state.values[MODAL_INPUTS.reason.blockId]?.[MODAL_INPUTS.reason.actionId],
    );
    const reason = (typed.success ? (typed.data.value ?? '') : '').trim();
    const ids = decodeBatchMetadata(view.private_metadata);
    const teamId = body.team?.id ?? body.user.team_id;
    const problem =
      reason.length > MAX_REASON_LENGTH
        ? `Keep the reason under ${MAX_REASON_LENGTH} characters.`
        : !ids || !teamId
          ? 'This form does not name requests I know of; nothing changed.'
          : undefined;
    if (problem || !ids || !teamId)
      return acknowledge(deps, () =>
        ack({ response_action: 'errors', errors: { [MODAL_INPUTS.reason.blockId]: problem ?? '' } }),
      );
    await decideAndTell(deps, ack, {
      approvalIds: ids,
      userId: body.user.id,
      teamId,
      vote: 'reject',
      reason: reason === '' ? null : reason,
    });
  });
}

/** Slack waits 3 s for an answer: what a batch has not decided by then is decided after the answer. */
const ANSWER_WITHIN_MS = 2_500;

/**
 * Decides the batch, then acknowledges Slack's request, then tells the person what was decided. Slack does not
 * send a batch click or form again, and nothing else records it: acknowledged first, a process that died before
 * deciding would lose it unseen. Decided first, a process that dies leaves Slack without its answer, which Slack
 * shows the person, who can click again (whatever was decided reads as such). A batch still deciding after
 * `ANSWER_WITHIN_MS` (a slow database, many requests) is answered then, and goes on.
 */
async function decideAndTell(
  deps: BatchListenerDeps,
  ack: () => Promise<void>,
  request: BatchRequest,
): Promise<void> {
  const deciding = decideBatch(deps, request);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ANSWER_WITHIN_MS);
  });
  await Promise.race([
    deciding.then(
      () => undefined,
      () => undefined,
    ),
    late,
  ]);
  clearTimeout(timer);
  await acknowledge(deps, ack);
  const outcome = await deciding;
  await deps.reply.tell(
    { userId: request.userId, channelId: undefined, threadTs: undefined },
    batchSummary(outcome, request.vote),
  );
}

/** A late or failed ack (Slack stops waiting after 3 s) is logged, never thrown: the decisions stand. */
async function acknowledge(deps: BatchListenerDeps, ack: () => Promise<void>): Promise<void> {
  try {
    await ack();
  } catch (error) {
    deps.logger.warn('batch decision could not be acknowledged', { error: describeError(error) });
  }
}
