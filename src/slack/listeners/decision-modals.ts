import type { App, BlockAction, ButtonAction, SlackViewAction, ViewSubmitAction } from '@slack/bolt';
import { z } from 'zod';
import type { EditResult } from '../../approvals/argument-edit-service.js';
import { describeError } from '../../errors.js';
import {
  buildEditModal,
  buildRejectModal,
  decodeModalMetadata,
  MAX_REASON_LENGTH,
} from '../blocks/decision-modals.js';
import { decodeApprovalButtonValue } from '../button-value.js';
import { ACTION_IDS, CALLBACK_IDS, MODAL_INPUTS } from '../ids.js';
import {
  type ActionListenerDeps,
  alreadyDecided,
  applyResult,
  clickOf,
  ephemeralTo,
  UNKNOWN_BUTTON,
} from './decision-replies.js';

const inputValue = z.object({ value: z.string().nullish() });

/** The text typed into one input of a submitted modal; empty when left blank. */
function submitted(view: SlackViewAction['view'], input: { blockId: string; actionId: string }): string {
  const parsed = inputValue.safeParse(view.state.values[input.blockId]?.[input.actionId]);
  return parsed.success ? (parsed.data.value ?? '') : '';
}

/**
 * Reject and Edit open a modal. A trigger id lives 3 seconds and works once, so the modal is opened right
 * after the ack; the decision is taken when the modal is submitted, and a refusal (not allowed, already
 * decided, invalid arguments) is shown inside the modal instead of closing it.
 */
export function registerDecisionModalListeners(app: App, deps: ActionListenerDeps): void {
  app.action<BlockAction<ButtonAction>>(
    { action_id: new RegExp(`^(${ACTION_IDS.reject}|${ACTION_IDS.edit})$`) },
    async ({ ack, body, action, client }) => {
      await ack();
      const channelId = body.channel?.id ?? body.container?.channel_id;
      const tell = ephemeralTo(deps, clickOf(body, action, false));
      const decoded = decodeApprovalButtonValue(action.value);
      const teamId = body.team?.id ?? body.user.team_id;
      const draft = decoded.ok && teamId ? await deps.edits.draft(decoded.approvalId, teamId) : undefined;
      if (!draft?.ok) {
        await tell(draft?.kind === 'not_pending' ? alreadyDecided(draft.approval) : UNKNOWN_BUTTON);
        return;
      }
      const { approval } = draft;
      const messageTs = body.message?.ts ?? body.container?.message_ts;
      const metadata = { approvalId: approval.id, channelId, messageTs };
      const view =
        action.action_id === ACTION_IDS.reject
          ? buildRejectModal(metadata, approval.toolName)
          : buildEditModal(metadata, approval.toolName, draft.json);
      try {
        await client.views.open({ trigger_id: body.trigger_id, view });
      } catch (error) {
        deps.logger.warn('decision modal could not be opened', {
          approvalId: approval.id,
          error: describeError(error),
        });
        await tell('I could not open the form for this request; please click the button again.');
      }
    },
  );

  app.view<ViewSubmitAction>(CALLBACK_IDS.rejectModal, async ({ ack, body, view }) => {
    const reason = submitted(view, MODAL_INPUTS.reason).trim();
    if (reason.length > MAX_REASON_LENGTH) {
      await ack({
        response_action: 'errors',
        errors: { [MODAL_INPUTS.reason.blockId]: `Keep the reason under ${MAX_REASON_LENGTH} characters.` },
      });
      return;
    }
    await decideFromModal(deps, ack, body, view, MODAL_INPUTS.reason.blockId, (request) =>
      deps.approvals.decide({ ...request, vote: 'reject', reason: reason === '' ? null : reason }),
    );
  });

  app.view<ViewSubmitAction>(CALLBACK_IDS.editModal, async ({ ack, body, view }) => {
    const json = submitted(view, MODAL_INPUTS.arguments);
    await decideFromModal(deps, ack, body, view, MODAL_INPUTS.arguments.blockId, (request) =>
      deps.edits.submit({ ...request, json }),
    );
  });
}

type ModalRequest = { approvalId: string; userId: string; teamId: string; channelId: string | undefined };

type ModalAck = (response?: { response_action: 'errors'; errors: Record<string, string> }) => Promise<void>;

/**
 * Decides from a submitted modal and answers it. The approval id and the card's channel and ts come from
 * `private_metadata`; the decider is the verified submitter. A refusal is shown in the modal; a committed
 * decision is applied (card, run, App Home) even if the ack itself failed, e.g. because Slack gave up waiting.
 */
async function decideFromModal(
  deps: ActionListenerDeps,
  ack: ModalAck,
  body: SlackViewAction,
  view: SlackViewAction['view'],
  blockId: string,
  decide: (request: ModalRequest) => Promise<EditResult>,
): Promise<void> {
  const metadata = decodeModalMetadata(view.private_metadata);
  const teamId = body.team?.id ?? body.user.team_id;
  let result: EditResult;
  try {
    result =
      metadata && teamId
        ? await decide({
            approvalId: metadata.approvalId,
            channelId: metadata.channelId,
            userId: body.user.id,
            teamId,
          })
        : { ok: false, kind: 'not_found' };
  } catch (error) {
    deps.logger.error('decision could not be recorded', { error: describeError(error) });
    await answer(deps, ack, {
      [blockId]: 'I could not record your decision because of a problem on my side; please submit again.',
    });
    return;
  }
  if (!result.ok) {
    await answer(deps, ack, { [blockId]: refusal(result) });
    return;
  }
  await answer(deps, ack);
  const fallback =
    metadata?.channelId && metadata.messageTs
      ? { channelId: metadata.channelId, messageTs: metadata.messageTs }
      : undefined;
  // Every refusal was shown in the modal, so there is nothing left to tell the person.
  await applyResult(deps, result, fallback, async () => undefined);
}

/** Acks the submission; a late or failed ack (Slack stops waiting after 3 s) is logged, never thrown. */
async function answer(
  deps: ActionListenerDeps,
  ack: ModalAck,
  errors?: Record<string, string>,
): Promise<void> {
  try {
    await (errors ? ack({ response_action: 'errors', errors }) : ack());
  } catch (error) {
    deps.logger.warn('modal submission could not be acknowledged', { error: describeError(error) });
  }
}

function refusal(result: Extract<EditResult, { ok: false }>): string {
  switch (result.kind) {
    case 'invalid':
    case 'not_allowed':
      return result.message;
    case 'not_found':
      return UNKNOWN_BUTTON;
    case 'already_voted':
      return 'You have already voted on this request; it needs approvals from other people.';
    case 'already_decided':
      return alreadyDecided(result.approval);
  }
}
