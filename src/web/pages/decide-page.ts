import { html } from 'hono/html';
import type { ApprovalRecord } from '../../approvals/approval.js';
import { prettyJson } from '../../approvals/argument-edit-service.js';
import type { ConsoleSession } from '../../console/ports.js';
import { type ApprovalDetailView, type ApprovalView, approvalView } from '../console-actions.js';
import { type Markup, time } from './layout.js';

/** The requests waiting for this person, each with its decision forms. */
export function decideList(requests: readonly ApprovalRecord[], session: ConsoleSession): Markup {
  if (requests.length === 0)
    return html`<h1>Decide</h1><p class="muted">Nothing waits for your decision.</p>`;
  return html`<h1>Decide</h1>
<p class="muted">${requests.length === 1 ? '1 request waits' : `${requests.length} requests wait`} for your decision, oldest first.</p>
${requests.map((approval) => requestCard(approvalView(approval), session, 'h2', prettyJson(approval.arguments)))}`;
}

/** One request in full: what the card shows, its votes and trail, and the forms when this person may decide. */
export function requestPage(view: ApprovalDetailView, session: ConsoleSession): Markup {
  return html`<p><a href="/console">← Decide</a></p>
${requestCard(view, session, 'h1', view.draft)}
${
  view.votes.length > 0
    ? html`<h2>Votes</h2><ul>${view.votes.map((v) => html`<li>${v.user}: ${v.vote} at ${time(v.at)}</li>`)}</ul>`
    : ''
}
<h2>Timeline</h2>
<ol class="timeline">${view.events.map((e) => html`<li>${time(e.at)} · <code>${e.kind}</code> · ${e.actor}</li>`)}</ol>`;
}

function requestCard(
  view: ApprovalView,
  session: ConsoleSession,
  heading: 'h1' | 'h2',
  /** The arguments to edit, for a person who may decide; undefined shows no forms. */
  draft: string | undefined,
): Markup {
  const title = html`<a href="/console/approvals/${view.id}">${view.tool}</a>`;
  return html`<section class="card" aria-labelledby="title-${view.id}">
  ${heading === 'h1' ? html`<h1 id="title-${view.id}">${view.tool}</h1>` : html`<h2 id="title-${view.id}">${title}</h2>`}
  <dl class="facts">
    <dt>Requested by</dt><dd>${view.requester}</dd>
    <dt>Status</dt><dd>${view.status}</dd>
    <dt>Asked</dt><dd>${time(view.createdAt)}</dd>
    <dt>Expires</dt><dd>${time(view.expiresAt)}</dd>
    <dt>Rule</dt><dd>${view.rule.appliedRule ?? "the tool's policy"}; ${view.rule.quorum} approval${view.rule.quorum === 1 ? '' : 's'} needed</dd>
    <dt>Thread</dt><dd><a href="${view.threadUrl}" rel="noreferrer">open in Slack</a></dd>
    ${view.decidedBy ? html`<dt>Decided by</dt><dd>${view.decidedBy} at ${time(view.decidedAt)}</dd>` : ''}
    ${view.reason ? html`<dt>Reason</dt><dd>${view.reason}</dd>` : ''}
  </dl>
  <pre aria-label="Arguments">${view.arguments}</pre>
  ${view.editedArguments ? html`<p>Approved with edited arguments:</p><pre>${view.editedArguments}</pre>` : ''}
  ${view.status === 'pending' && draft !== undefined ? decisionForms(view, session, draft) : ''}
</section>`;
}

function decisionForms(view: ApprovalView, session: ConsoleSession, draft: string): Markup {
  const action = `/console/approvals/${view.id}/decision`;
  const csrf = html`<input type="hidden" name="csrf" value="${session.csrfToken}">`;
  return html`<div class="actions">
  <form method="post" action="${action}">
    ${csrf}<input type="hidden" name="decision" value="approve">
    <button type="submit" class="approve">Approve</button>
  </form>
  <form method="post" action="${action}">
    ${csrf}<input type="hidden" name="decision" value="reject">
    <label for="reason-${view.id}">Reason</label>
    <input type="text" id="reason-${view.id}" name="reason" maxlength="2000" placeholder="Why not (the requester sees it)">
    <button type="submit" class="reject">Reject</button>
  </form>
</div>
<details>
  <summary>Edit arguments, then approve</summary>
  <form method="post" action="${action}">
    ${csrf}<input type="hidden" name="decision" value="approve">
    <label for="arguments-${view.id}">Arguments (JSON)</label>
    <textarea id="arguments-${view.id}" name="arguments" spellcheck="false">${draft}</textarea>
    <button type="submit" class="approve">Approve with these arguments</button>
  </form>
</details>`;
}
