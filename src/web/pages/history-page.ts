import { html } from 'hono/html';
import { APPROVAL_STATUSES } from '../../approvals/approval.js';
import { type AuditRequest, queryString } from '../audit-filter.js';
import type { AuditEventView, ChainStateView, RunTimelineView } from '../history-views.js';
import { type Markup, scrolling, time } from './layout.js';
import { shortenedForPage } from './shortened-values.js';

export interface HistoryPageView {
  request: AuditRequest;
  events: AuditEventView[];
  /** The query string of the next (older) page, or null on the last page. */
  older: string | null;
  chain: ChainStateView;
}

/** The audit log of the workspace: the filter form (GET, so the address can be shared), the table, exports. */
export function historyPage(view: HistoryPageView): Markup {
  const { given } = view.request;
  return html`<h1>History</h1>
${chainBadge(view.chain, given)}
${filterForm(given)}
<p class="actions">
  <a href="/console/api/audit/export${queryString(given, { format: 'csv' })}" download>Export CSV</a>
  <a href="/console/api/audit/export${queryString(given, { format: 'jsonl' })}" download>Export JSONL</a>
</p>
${view.events.length === 0 ? html`<p class="muted">No event matches these filters.</p>` : eventTable(view.events)}
${view.older ? html`<p><a rel="next" href="/console/history${view.older}">Older →</a></p>` : ''}`;
}

/** A problem with the filters: the form again, with what to change. */
export function historyProblem(given: Record<string, string>, message: string): Markup {
  return html`<h1>History</h1>${filterForm(given)}<p class="notice" role="alert">${message}</p>`;
}

function chainBadge(chain: ChainStateView, given: AuditRequest['given']): Markup {
  const state =
    chain.state === 'verified'
      ? html`<span class="badge ok">Chain verified</span> <span class="muted">checked ${time(chain.checkedAt)}</span>`
      : chain.state === 'broken'
        ? html`<span class="badge bad">Chain broken at event ${chain.seq}</span> ${chain.message}
            <span class="muted">checked ${time(chain.checkedAt)}</span>`
        : html`<span class="badge">Chain not checked yet</span> <span class="muted">a check is under way</span>`;
  return html`<form class="filters chain" method="get" action="/console/history" aria-label="Audit chain">
  <p role="status">${state}</p>
  ${Object.entries(given).map(([key, value]) => html`<input type="hidden" name="${key}" value="${value}">`)}
  <input type="hidden" name="verify" value="now">
  <button type="submit">Check now</button>
</form>`;
}

function filterForm(given: Partial<Record<string, string>>): Markup {
  const input = (name: string, label: string, placeholder: string) =>
    html`<label>${label}<input type="text" name="${name}" value="${given[name] ?? ''}" placeholder="${placeholder}"></label>`;
  return html`<form class="filters" method="get" action="/console/history" aria-label="Filters">
  ${input('since', 'From', '2026-05-01 or 7d')}
  ${input('until', 'Until', '2026-05-31T18:00:00Z')}
  ${input('tool', 'Tool', 'create_note')}
  ${input('actor', 'Actor or requester', 'U0123ABCD')}
  <label>Outcome<select name="outcome">
    <option value="">any</option>
    ${APPROVAL_STATUSES.map(
      (status) =>
        html`<option value="${status}"${given.outcome === status ? html` selected` : ''}>${status}</option>`,
    )}
  </select></label>
  ${input('channel', 'Channel', 'C0123ABCD')}
  ${input('kind', 'Event', 'approval.expired')}
  ${input('q', 'Text in arguments', 'invoice')}
  <button type="submit">Filter</button>
  <a href="/console/history">Clear</a>
</form>`;
}

function eventTable(events: readonly AuditEventView[]): Markup {
  return scrolling(
    'Events',
    html`<table class="events">
<thead><tr><th scope="col">Time</th><th scope="col">Event</th><th scope="col">Actor</th><th scope="col">Tool</th><th scope="col">Outcome</th><th scope="col">Request</th></tr></thead>
<tbody>
${events.map(
  (e) => html`<tr>
  <td>${time(e.at)}</td><td><code>${e.kind}</code></td><td>${e.actor}</td><td>${e.tool ?? ''}</td>
  <td>${e.outcome ?? ''}</td>
  <td>${e.runId ? html`<a href="/console/runs/${e.runId}">run</a>` : ''}
    ${e.approvalId ? html`<a href="/console/approvals/${e.approvalId}">request</a>` : ''}</td>
</tr>`,
)}
</tbody>
</table>`,
  );
}

/** A run's story from its audit events: request, card, reminders, decision, tool output, answer. */
export function runPage(view: RunTimelineView, backToHistory: boolean): Markup {
  return html`${backToHistory ? html`<p><a href="/console/history">← History</a></p>` : ''}
<h1>Run <code>${view.runId}</code></h1>
${
  view.approvals.length > 0
    ? html`<p>Requests: ${view.approvals.map(
        (a) => html`<a href="/console/approvals/${a.id}">${a.tool}</a> (${a.status}) `,
      )}</p>`
    : ''
}
<ol class="timeline">
${view.steps.map(
  (s) => html`<li>
  <strong>${s.step}</strong> · ${time(s.at)} · <code>${s.kind}</code> · ${s.actor}${s.tool ? html` · ${s.tool}` : ''}
  ${Object.keys(s.payload).length > 0 ? html`<pre>${JSON.stringify(shortenedForPage(s.payload), null, 2)}</pre>` : ''}
</li>`,
)}
</ol>`;
}
