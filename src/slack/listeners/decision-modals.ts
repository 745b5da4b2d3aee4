import type { App, BlockAction, ButtonAction, SlackViewAction, types, ViewSubmitAction } from '@slack/bolt';
import { z } from 'zod';
import type { ClickedCard } from '../../approvals/approval.js';
import type { ApprovalService } from '../../approvals/approval-service.js';
import type { ArgumentEditService, EditResult } from '../../approvals/argument-edit-service.js';
import type { RunWork } from '../../conversations/run-work.js';
import { describeError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { buildArgumentsModal, decodePageValue } from '../blocks/arguments-modal.js';
import {
  buildEditModal,
  buildRejectModal,
  MAX_INPUT_LENGTH,
  MAX_REASON_LENGTH,
} from '../blocks/decision-modals.js';
import { decodeApprovalButtonValue } from '../button-value.js';
import { clickOf, enterpriseIdOf } from '../clicks/click.js';
import type { ClickReply } from '../clicks/click-reply.js';
import { applyResult } from '../clicks/decision-outcome.js';
import { refusalText, UNKNOWN_BUTTON } from '../clicks/refusals.js';
import { ACTION_IDS, CALLBACK_IDS, MODAL_INPUTS } from '../ids.js';
import { decodeModalMetadata, encodeModalMetadata } from '../modal-metadata.js';

/** What the Reject, Edit and View all arguments buttons and their forms need. */
export interface DecisionModalDeps {
  approvals: Pick<ApprovalService, 'check' | 'decide'>;
  edits: ArgumentEditService;
  /** Cards, the run and App Home after a decision (in this thread, or in a worker). */
  work: Pick<RunWork, 'settled'>;
  /** Answers the person who clicked. */
  reply: ClickReply;
  /** Signs what decision forms carry in their metadata (see modal-metadata.ts). */
  modalKey: Buffer;
  logger: Logger;
}

/**
 * The arguments as the Edit form shows them: pretty JSON when it fits the input, else compact JSON, else
 * undefined (the form is not opened rather than cut).
 */
function editableJson(raw: string): string | undefined {
  let candidates: string[];
  try {
    const parsed: unknown = JSON.parse(raw);
    candidates = [JSON.stringify(parsed, null, 2), JSON.stringify(parsed)];
  } catch {
    candidates = [raw];
  }
  return candidates.find((json) => json.length <= MAX_INPUT_LENGTH);
}

const inputValue = z.object({ value: z.string().nullish() });

/** The text typed into one input of a submitted modal; empty when left blank. */
function submitted(view: SlackViewAction['view'], input: { blockId: string; actionId: string }): string {
  const parsed = inputValue.safeParse(view.state.values[input.blockId]?.[input.actionId]);
  return parsed.success ? (parsed.data.value ?? '') : '';
}

/**
 * Reject and Edit open a modal. A trigger id lives 3 seconds and works once, so the modal is opened right
 * after the checks (is this person allowed to decide it now?), never before: the Edit form shows the full
 * arguments. The decision is taken when the modal is submitted, and a refusal (not allowed, already decided,
 * invalid arguments) is shown inside the modal instead of closing it.
 */
export function registerDecisionModalListeners(app: App, deps: DecisionModalDeps): void {
  app.action<BlockAction<ButtonAction>>(
    { action_id: new RegExp(`^(${ACTION_IDS.reject}|${ACTION_IDS.edit})$`) },
    async ({ ack, body, action, client }) => {
      await ack();
      const click = clickOf(body, action, false);
      const tell = (text: string) => deps.reply.tell(click, text);
      const decoded = decodeApprovalButtonValue(action.value);
      const reject = action.action_id === ACTION_IDS.reject;
      const checked =
        decoded.ok && click.teamId
          ? await deps.approvals.check({
              approvalId: decoded.approvalId,
              userId: click.userId,
              teamId: click.teamId,
              enterpriseId: click.enterpriseId,
              channelId: click.channelId,
              vote: reject ? 'reject' : 'approve',
              edit: !reject,
            })
          : ({ ok: false, kind: 'not_found' } as const);
      if (!checked.ok) {
        if (!(checked.kind === 'not_allowed' && checked.quiet)) await tell(refusalText(checked));
        return;
      }
      const { approval } = checked;
      const metadata = encodeModalMetadata(
        {
          approvalId: approval.id,
          userId: click.userId,
          channelId: click.channelId,
          messageTs: click.messageTs,
          threadTs: click.threadTs,
        },
        deps.modalKey,
      );
      let view: types.ModalView;
      if (reject) view = buildRejectModal(metadata, approval.toolName);
      else {
        const json = editableJson(approval.arguments);
        if (json === undefined) {
          await tell(
            `The arguments are ${approval.arguments.length} characters, more than the ${MAX_INPUT_LENGTH} the edit form can hold, so I will not open it with part of them cut off. Use View all arguments to read them, then approve or reject them as they are.`,
          );
          return;
        }
        view = buildEditModal(metadata, approval.toolName, json);
      }
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

  // "View all arguments" (on the card) and its pages (inside the modal): reading only, never deciding, and only
  // for those who may see the request; to anyone else it is as unknown as a forged id.
  app.action<BlockAction<ButtonAction>>(
    { action_id: new RegExp(`^(${ACTION_IDS.viewArguments}|${ACTION_IDS.argumentsPage})$`) },
    async ({ ack, body, action, client }) => {
      await ack();
      const click = clickOf(body, action, false);
      const target = argumentsTarget(deps, body, action, click);
      const approval =
        target && click.teamId
          ? await deps.edits.readable(target.approvalId, click.teamId, {
              userId: click.userId,
              channelId: target.channelId,
            })
          : undefined;
      if (!target || !approval) {
        await deps.reply.tell(click, UNKNOWN_BUTTON);
        return;
      }
      // The pages carry where the modal was opened from, signed for this person: a page click comes from no channel.
      const from = encodeModalMetadata(
        { approvalId: approval.id, userId: click.userId, channelId: target.channelId },
        deps.modalKey,
      );
      const view = buildArgumentsModal(approval, target.page, from);
      try {
        if (target.paging && body.view?.id) await client.views.update({ view_id: body.view.id, view });
        else await client.views.open({ trigger_id: body.trigger_id, view });
      } catch (error) {
        deps.logger.warn('arguments modal could not be shown', {
          approvalId: approval.id,
          error: describeError(error),
        });
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

/**
 * Which request's arguments, which page, and the channel the reader came from: the clicked card's channel, or,
 * for a page of the modal, the channel signed into the modal when it was opened (and only for the same request).
 */
function argumentsTarget(
  deps: DecisionModalDeps,
  body: BlockAction<ButtonAction>,
  action: ButtonAction,
  click: { userId: string; channelId: string | undefined },
): { approvalId: string; page: number; channelId: string | undefined; paging: boolean } | undefined {
  if (action.action_id !== ACTION_IDS.argumentsPage) {
    const decoded = decodeApprovalButtonValue(action.value);
    return decoded.ok
      ? { approvalId: decoded.approvalId, page: 1, channelId: click.channelId, paging: false }
      : undefined;
  }
  const page = decodePageValue(action.value);
  const opened = decodeModalMetadata(body.view?.private_metadata ?? '', deps.modalKey, click.userId);
  if (!page) return undefined;
  const channelId = opened?.approvalId === page.approvalId ? opened.channelId : undefined;
  return { ...page, channelId, paging: true };
}

type ModalRequest = {
  approvalId: string;
  userId: string;
  teamId: string;
  enterpriseId: string | undefined;
  channelId: string | undefined;
  clicked: ClickedCard | undefined;
};

type ModalAck = (response?: { response_action: 'errors'; errors: Record<string, string> }) => Promise<void>;

/**
 * Decides from a submitted modal and answers it. The approval id and the card's channel and ts come from
 * `private_metadata`; the decider is the verified submitter. A refusal is shown in the modal; a committed
 * decision is applied (card, run, App Home) even if the ack itself failed, e.g. because Slack gave up waiting.
 */
async function decideFromModal(
  deps: DecisionModalDeps,
  ack: ModalAck,
  body: SlackViewAction,
  view: SlackViewAction['view'],
  blockId: string,
  decide: (request: ModalRequest) => Promise<EditResult>,
): Promise<void> {
  const metadata = decodeModalMetadata(view.private_metadata, deps.modalKey, body.user.id);
  const teamId = body.team?.id ?? body.user.team_id;
  const clicked = metadata
    ? { channelId: metadata.channelId, messageTs: metadata.messageTs, threadTs: metadata.threadTs }
    : undefined;
  let result: EditResult;
  try {
    result =
      metadata && teamId
        ? await decide({
            approvalId: metadata.approvalId,
            channelId: metadata.channelId,
            userId: body.user.id,
            teamId,
            enterpriseId: enterpriseIdOf(body),
            clicked,
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
    await answer(deps, ack, { [blockId]: refusalText(result) });
    return;
  }
  await answer(deps, ack);
  // Every refusal was shown in the modal, so there is nothing left to tell the person.
  await applyResult(deps.work, result, clicked, async () => undefined);
}

/** Acks the submission; a late or failed ack (Slack stops waiting after 3 s) is logged, never thrown. */
async function answer(
  deps: DecisionModalDeps,
  ack: ModalAck,
  errors?: Record<string, string>,
): Promise<void> {
  try {
    await (errors ? ack({ response_action: 'errors', errors }) : ack());
  } catch (error) {
    deps.logger.warn('modal submission could not be acknowledged', { error: describeError(error) });
  }
}
