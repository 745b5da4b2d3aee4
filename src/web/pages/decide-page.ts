import { html } from 'hono/html';
import { describeChange } from '../../approvals/argument-diff.js';
import type { ConsoleSession } from '../../console/ports.js';
import type { ApprovalDetailView, ApprovalView } from '../console-actions.js';
import { type Markup, time } from './layout.js';

/** A request waiting for this person, with its arguments as sent (to edit before approving). */
export interface Decidable {
  view: ApprovalView;
  draft: string;
}

/**
 * One page of the requests waiting for this person: where it starts among them all, how many there are, and the
 * cursor of the next page (null on the last).
 */
export interface DecidePage {
  requests: readonly Decidable[];
  offset: number;
  total: number;
  next: string | null;
}

/** The requests waiting for this person, a page at a time, each with its decision forms. */
export function decideList(list: DecidePage, session: ConsoleSession, now: number): Markup {
  const { requests, offset, total, next } = list;
  if (total === 0) return html`<h1>Decide</h1><p class="muted">Nothing waits for your decision.</p>`;
  const shown = requests.length < total ? ` (${offset + 1}–${offset + requests.length} here)` : '';
  // Two or more on the page: each can be ticked, and the ticked ones decided together by one form.
  const batch = requests.length >= 2;
  return html`<h1>Decide</h1>
<p class="muted">${total === 1 ? '1 request waits' : `${total} requests wait`} for your decision, oldest first${shown}.</p>
${batch ? batchForm(session) : ''}
${requests.map(({ view, draft }) => requestCard(view, session, now, { heading: 'h2', draft, batch }))}
${
  offset > 0 || next !== null
    ? html`<nav class="pages" aria-label="Pages">${offset > 0 ? html`<a href="/console">← Oldest</a> ` : ''}${
        next !== null ? html`<a href="/console?cursor=${next}">Newer requests →</a>` : ''
      }</nav>`
    : ''
}`;
}

/**
 * Decides the ticked requests (their checkboxes belong to this form through `form="batch"`), each on its own.
 * Reject comes first in the form, so Enter in the reason rejects, as in a request's own reject form.
 */
function batchForm(session: ConsoleSession): Markup {
  return html`<form id="batch" class="actions" method="post" action="/console/decisions" aria-label="Decide the selected requests">
  <input type="hidden" name="csrf" value="${session.csrfToken}">
  <label for="batch-reason">Reason for rejecting the selected</label>
  <input type="text" id="batch-reason" name="reason" maxlength="2000" placeholder="One reason for all (the requesters see it)">
  <button type="submit" name="decision" value="reject" class="reject">Reject selected</button>
  <button type="submit" name="decision" value="approve" class="approve">Approve selected</button>
</form>`;
}

/** One request in full: what the card shows, its votes and trail, and the forms when this person may decide. */
export function requestPage(view: ApprovalDetailView, session: ConsoleSession, now: number): Markup {
  return html`<p><a href="/console">← Decide</a></p>
${requestCard(view, session, now, { heading: 'h1', draft: view.draft })}
${view.mayBreakGlass ? breakGlassForm(view, session) : ''}
${
  view.votes.length > 0
    ? html`<h2>Votes</h2><ul>${view.votes.map((v) => html`<li>${v.user}: ${v.vote} at ${time(v.at)}</li>`)}</ul>`
    : ''
}
<h2>Timeline</h2>
<p><a href="/console/runs/${view.runId}">The whole run's timeline</a></p>
<ol class="timeline">${view.events.map((e) => html`<li>${time(e.at)} · <code>${e.kind}</code> · ${e.actor}</li>`)}</ol>`;
}

function requestCard(
  view: ApprovalView,
  session: ConsoleSession,
  now: number,
  /** `draft`: the arguments to edit, for a person who may decide; undefined shows no forms. */
  shown: { heading: 'h1' | 'h2'; draft: string | undefined; batch?: boolean },
): Markup {
  const { draft } = shown;
  return html`<section class="card" aria-labelledby="title-${view.id}">
  ${
    shown.heading === 'h1'
      ? html`<h1 id="title-${view.id}">${view.call}</h1>`
      : html`<h2 id="title-${view.id}"><a href="/console/approvals/${view.id}">${view.call}</a></h2>`
  }
  ${
    shown.batch && view.status === 'pending'
      ? html`<p><label><input type="checkbox" name="ids" value="${view.id}" form="batch" aria-describedby="title-${view.id}"> Select</label></p>`
      : ''
  }
  <dl class="facts">
    <dt>Requested by</dt><dd>${view.requester}</dd>
    <dt>Status</dt><dd>${view.status}</dd>
    <dt>Asked</dt><dd>${time(view.createdAt)}</dd>
    <dt>Expires</dt><dd>${time(view.expiresAt)}${view.status === 'pending' ? timeLeft(view.expiresAt, now) : ''}</dd>
    ${view.risk ? html`<dt>Risk</dt><dd class="risk-${view.risk}">${view.risk}</dd>` : ''}
    <dt>Rule</dt><dd>${view.rule.appliedRule ?? "the tool's policy"}</dd>
    <dt>Approvals</dt><dd>${quorum(view)}</dd>
    <dt>Thread</dt><dd><a href="${view.threadUrl}" rel="noreferrer">open in Slack</a></dd>
    ${view.decidedBy ? html`<dt>Decided by</dt><dd>${view.decidedBy} at ${time(view.decidedAt)}</dd>` : ''}
    ${view.reason ? html`<dt>Reason</dt><dd>${view.reason}</dd>` : ''}
    ${
      view.review
        ? html`<dt>Reviewer (model)</dt><dd>${view.review.summary}${view.review.flags.map((flag) => html`<br>Flag: ${flag}`)}</dd>`
        : ''
    }
  </dl>
  ${view.preview ? html`<p aria-label="Effect"><strong>Effect:</strong> ${view.preview}</p>` : ''}
  <pre aria-label="Arguments">${view.arguments}</pre>
  ${view.changes.length > 0 ? html`<p>Changes made before approving:</p><pre aria-label="Changes">${view.changes.map(describeChange).join('\n')}</pre>` : ''}
  ${view.editedArguments ? html`<p>Approved with edited arguments:</p><pre>${view.editedArguments}</pre>` : ''}
  ${view.status === 'pending' && draft !== undefined ? decisionForms(view, session, draft) : ''}
</section>`;
}

function quorum(view: ApprovalView): string {
  const needed = view.rule.quorum;
  if (needed === 1) return 'one approval decides';
  const given = view.approvedBy.length;
  return `${given} of ${needed} given${given > 0 ? ` (${view.approvedBy.join(', ')})` : ''}`;
}

/** " (in 3 h 20 min)": what is left before a request expires (expiry never reads as a refusal). */
function timeLeft(expiresAt: string | null, now: number): string {
  if (expiresAt === null) return '';
  const left = Date.parse(expiresAt) - now;
  if (left <= 0) return ' (expiring now)';
  const minutes = Math.ceil(left / 60_000);
  const hours = Math.floor(minutes / 60);
  if (hours >= 48) return ` (in ${Math.floor(hours / 24)} days)`;
  return hours > 0 ? ` (in ${hours} h ${minutes % 60} min)` : ` (in ${minutes} min)`;
}

function decisionForms(view: ApprovalView, session: ConsoleSession, draft: string): Markup {
  const action = `/console/approvals/${view.id}/decision`;
  const csrf = html`<input type="hidden" name="csrf" value="${session.csrfToken}">`;
  return html`<div class="actions">
  <form method="post" action="${action}">
    ${csrf}<input type="hidden" name="decision" value="approve">
    <button type="submit" class="approve">Approve</button>
  </form>
  ${
    view.offers.standing
      ? html`<form method="post" action="${action}">
    ${csrf}<input type="hidden" name="decision" value="approve"><input type="hidden" name="standing" value="thread">
    <button type="submit">Approve for this thread</button>
  </form>`
      : ''
  }
  <form method="post" action="${action}">
    ${csrf}<input type="hidden" name="decision" value="reject">
    <label for="reason-${view.id}">Reason</label>
    <input type="text" id="reason-${view.id}" name="reason" maxlength="2000" placeholder="Why not (the requester sees it)">
    <button type="submit" class="reject">Reject</button>
  </form>
</div>
${
  view.offers.edit
    ? html`<details>
  <summary>Edit arguments, then approve</summary>
  <form method="post" action="${action}">
    ${csrf}<input type="hidden" name="decision" value="approve">
    <label for="arguments-${view.id}">Arguments (JSON)</label>
    <textarea id="arguments-${view.id}" name="arguments" spellcheck="false">${draft}</textarea>
    <button type="submit" class="approve">Approve with these arguments</button>
  </form>
</details>`
    : ''
}`;
}

/**
 * For an admin the rule refuses: approve anyway with a justification, which another admin reviews afterwards
 * (the decision is marked break glass everywhere).
 */
function breakGlassForm(view: ApprovalView, session: ConsoleSession): Markup {
  return html`<section class="card" aria-labelledby="break-glass-${view.id}">
  <h2 id="break-glass-${view.id}">Break glass</h2>
  <p class="muted">The policy does not let you approve this request. As an admin you may approve it anyway, saying why:
  the decision is marked break glass on the card, in App Home and in the audit log, and another admin is asked to
  acknowledge it.</p>
  <form method="post" action="/console/approvals/${view.id}/decision">
    <input type="hidden" name="csrf" value="${session.csrfToken}">
    <input type="hidden" name="decision" value="approve">
    <label for="justification-${view.id}">Justification (10 to 500 characters)</label>
    <textarea id="justification-${view.id}" name="justification" minlength="10" maxlength="500" required></textarea>
    <button type="submit" class="reject">Break glass and approve</button>
  </form>
</section>`;
}
