import { html } from 'hono/html';
import type { PolicyTableRow } from '../../approvals/policy-summary.js';
import type { ConsoleSession } from '../../console/ports.js';
import { DEFAULT_REPLAY_DAYS, type ReplayAnswer, type ReplayOutcome } from '../policy-replay-run.js';
import { type Markup, scrolling, time } from './layout.js';

export interface PolicyInForce {
  source: string;
  /** The workspace whose section of the file is laid over the file's own rules here; null when it has none. */
  team: string | null;
  summary: string;
  tools: PolicyTableRow[];
}

/** What the replay form was sent with, and what came of it. */
export interface ReplayAsked {
  text: string;
  days: string | undefined;
  outcome: ReplayOutcome;
}

const yesNo = (value: boolean) => (value ? 'allowed' : 'not allowed');

/** The policy in force, one row per tool, then the replay form and, once sent, what the candidate would change. */
export function policyPage(
  policy: PolicyInForce,
  session: ConsoleSession,
  asked: ReplayAsked | undefined,
): Markup {
  return html`<h1>Policy</h1>
<p>In force in this workspace: <code>${policy.source}</code>${policy.team ? html`, with its section for <code>${policy.team}</code>` : ''}. It is read from the file at start-up and on <code>SIGHUP</code>; this
page changes nothing.</p>
<p class="muted" id="policy-summary">${policy.summary}</p>
${scrolling(
  'Policy in force',
  html`<table class="policy" aria-describedby="policy-summary">
<thead><tr><th scope="col">Tool</th><th scope="col">Approval</th><th scope="col">Approvers</th><th scope="col">Quorum</th>
<th scope="col">Self-approval</th><th scope="col">Standing approval</th><th scope="col">Expires after</th>
<th scope="col">Reminder every</th><th scope="col">Escalation</th><th scope="col">Conditional rules</th></tr></thead>
<tbody>${policy.tools.map(
    (row) => html`<tr><th scope="row"><code>${row.tool}</code></th><td>${row.approval}</td>
<td>${row.approvers.join(' or ')}</td><td>${row.quorum}</td><td>${yesNo(row.selfApproval)}</td>
<td>${yesNo(row.standingApproval)}</td><td>${row.expiresAfter ?? 'never'}</td><td>${row.remindAfter ?? 'none'}</td>
<td>${row.escalation ?? 'none'}</td>
<td>${row.rules.length === 0 ? '—' : html`<ol>${row.rules.map((r) => html`<li><code>${r.when}</code>: ${r.effect}</li>`)}</ol>`}</td></tr>`,
  )}</tbody>
</table>`,
)}
<h2 id="replay">Replay a candidate policy</h2>
<p class="muted">Paste a policy file's JSON: it is checked as <code>npm run policy -- check</code> checks a file, then
replayed over this workspace's requests of the last days as <code>npm run policy -- replay</code> does. Nothing is
written.</p>
<form method="post" action="/console/policy/replay" aria-labelledby="replay">
  <input type="hidden" name="csrf" value="${session.csrfToken}">
  <label>Candidate policy (JSON)<textarea name="policy" spellcheck="false" required>${asked?.text ?? ''}</textarea></label>
  <div class="filters">
    <label>Days <input type="number" name="days" min="1" max="366" value="${asked?.days || String(DEFAULT_REPLAY_DAYS)}"></label>
    <button type="submit">Replay</button>
  </div>
</form>
${asked ? replayResult(asked.outcome) : ''}`;
}

function replayResult(outcome: ReplayOutcome): Markup {
  if (!outcome.ok)
    return html`<section class="card" role="alert"><h2>The candidate has ${outcome.problems.length} problem(s)</h2>
<ul class="problems">${outcome.problems.map((p) => html`<li>${p}</li>`)}</ul></section>`;
  return replayTables(outcome.answer);
}

function replayTables(answer: ReplayAnswer): Markup {
  return html`<section aria-labelledby="replay-result">
<h2 id="replay-result">Replay of ${answer.requests} request(s) since ${time(answer.since)}</h2>
${scrolling(
  'Replay by tool',
  html`<table class="replay-summary">
<thead><tr><th scope="col">Tool</th><th scope="col">Requests</th><th scope="col">Need approval</th>
<th scope="col">No approval</th><th scope="col">Decider refused</th><th scope="col">Differ</th></tr></thead>
<tbody>${answer.summary.map(
    (r) =>
      html`<tr><th scope="row"><code>${r.tool}</code></th><td>${r.requests}</td><td>${r.stillNeedApproval}</td><td>${r.noApproval}</td><td>${r.deciderRefused}</td><td>${r.differ}</td></tr>`,
  )}</tbody>
</table>`,
)}
<h3>${answer.changed.length === 0 ? 'No decision would change.' : `Decisions that would change (${answer.changed.length})`}</h3>
${
  answer.changed.length === 0
    ? ''
    : scrolling(
        'Decisions that would change',
        html`<table class="replay-changed">
<thead><tr><th scope="col">Request</th><th scope="col">Asked</th><th scope="col">Tool</th><th scope="col">Requester</th>
<th scope="col">Status</th><th scope="col">What would change</th></tr></thead>
<tbody>${answer.changed.map(
          (r) => html`<tr><td><a href="/console/approvals/${r.approvalId}">${r.approvalId}</a></td>
<td>${time(new Date(r.at).toISOString())}</td><td><code>${r.tool}</code></td><td>${r.requesterId}</td><td>${r.status}</td>
<td>${r.differences.join('; ')}${r.after.error ? ` (rule could not be evaluated: ${r.after.error})` : ''}</td></tr>`,
        )}</tbody>
</table>`,
      )
}
${
  answer.pruned.count > 0
    ? html`<p class="muted">${answer.pruned.count} older request(s) had their arguments removed by retention
(${answer.pruned.limits.join(', ')}) and were not replayed.</p>`
    : ''
}
</section>`;
}
