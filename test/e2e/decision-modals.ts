import type { SlackCall } from '../support/fake-slack.js';
import { isRecord } from '../support/json-value.js';
import { viewSubmissionPayload } from '../support/slack-payloads.js';
import { postInteraction } from '../support/slack-requests.js';
import { approvalIdOf, type Harness, SECRET } from './harness.js';

/** The modal opened (views.open) for this card's approval, after the click on `button`. */
export async function openModal(h: Harness, card: SlackCall, button: 'reject' | 'edit', user: string) {
  const approvalId = approvalIdOf(card);
  const before = h.slack.callsTo('views.open').length;
  const click = await h.click(card, button, user);
  if (click.status !== 200) throw new Error(`click answered ${click.status}`);
  const call = await h.slack.waitForCall(
    'views.open',
    (c) =>
      h.slack.callsTo('views.open').indexOf(c) >= before &&
      JSON.stringify(c.params.view).includes(approvalId),
    10_000,
  );
  const view = call.params.view;
  if (!isRecord(view) || typeof view.private_metadata !== 'string' || typeof view.callback_id !== 'string')
    throw new Error('views.open without a modal');
  return { call, view, privateMetadata: view.private_metadata, callbackId: view.callback_id };
}

/** Submits a modal as Slack does; resolves with the HTTP status and the ack body (errors, if any). */
export async function submitModal(
  h: Harness,
  modal: { privateMetadata: string; callbackId: string },
  user: string,
  values: Record<string, Record<string, unknown>>,
): Promise<{ status: number; body: unknown }> {
  const response = await postInteraction(
    h.url,
    SECRET,
    viewSubmissionPayload({
      userId: user,
      callbackId: modal.callbackId,
      privateMetadata: modal.privateMetadata,
      values,
    }),
  );
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

/** Reject → modal → submit, with or without a reason. */
export async function rejectWithModal(h: Harness, card: SlackCall, user: string, reason?: string) {
  const modal = await openModal(h, card, 'reject', user);
  return submitModal(h, modal, user, {
    reason: { reason_input: { type: 'plain_text_input', value: reason ?? null } },
  });
}

/** Edit → modal (with the arguments prefilled) → submit `json`. */
export async function editWithModal(h: Harness, card: SlackCall, user: string, json: string) {
  const modal = await openModal(h, card, 'edit', user);
  const result = await submitModal(h, modal, user, {
    arguments: { arguments_input: { type: 'plain_text_input', value: json } },
  });
  return { ...result, modal };
}
