import { html } from 'hono/html';
import type { ApprovalTrends } from '../../approvals/approval-trends.js';
import { approximateDuration } from '../../approvals/wait-buckets.js';
import type { Markup } from './layout.js';
import { groupedBarChart, lineChart, stackedBarChart } from './svg-charts.js';

/**
 * The charts of a workspace's requests over a window, each drawn as SVG on the server with the table it was
 * drawn from beneath it, and the form that picks the window (a GET, so the address can be shared).
 */
export function chartsPage(
  trends: ApprovalTrends | undefined,
  asked: { since: string | undefined; until: string | undefined },
): Markup {
  return html`<h1>Charts</h1>
<form class="filters" method="get" action="/console/charts">
  <label>Since <input type="text" name="since" value="${asked.since ?? ''}" placeholder="30d or 2026-05-01"></label>
  <label>Until <input type="text" name="until" value="${asked.until ?? ''}" placeholder="now, or 2026-05-31"></label>
  <button type="submit">Show</button>
</form>
${trends ? charts(trends) : ''}`;
}

function charts(t: ApprovalTrends): Markup {
  return html`<p class="muted">From ${t.since} to ${t.until} (UTC days). Requests are counted on the day they were
made, with their status now; times to decision are over the requests made in the range that were decided, each within 5 %.</p>
${stackedBarChart({
  id: 'requests-per-day',
  title: 'Requests per day by outcome',
  labelHeading: 'Day',
  labels: t.days,
  series: t.requestsPerDay.map((s) => ({ key: s.key, values: s.perDay })),
})}
${groupedBarChart({
  id: 'decision-time',
  title: 'Time to decision per tool (p50 and p90)',
  labelHeading: 'Tool',
  labels: t.decisionTime.map((d) => d.tool),
  series: [
    { key: 'p50', values: t.decisionTime.map((d) => d.p50Ms) },
    { key: 'p90', values: t.decisionTime.map((d) => d.p90Ms) },
  ],
  format: approximateDuration,
})}
${groupedBarChart({
  id: 'top-tools',
  title: 'Most requested tools',
  labelHeading: 'Tool',
  labels: t.topTools.map((tool) => tool.tool),
  series: [{ key: 'requests', values: t.topTools.map((tool) => tool.requests) }],
})}
${stackedBarChart({
  id: 'deadlines-per-day',
  title: 'Expiries and escalations per day',
  labelHeading: 'Day',
  labels: t.days,
  series: [
    { key: 'expired', values: t.expiredPerDay },
    { key: 'escalated', values: t.escalatedPerDay },
  ],
})}
${lineChart({
  id: 'tokens-per-person',
  title: 'Tokens per day by person',
  labelHeading: 'Day',
  labels: t.days,
  series: t.tokens.byPerson.map((s) => ({ key: s.key, values: s.perDay })),
})}
${lineChart({
  id: 'tokens-per-tool',
  title: 'Tokens per day by tool called',
  labelHeading: 'Day',
  labels: t.days,
  series: t.tokens.byTool.map((s) => ({ key: s.key, values: s.perDay })),
})}`;
}
