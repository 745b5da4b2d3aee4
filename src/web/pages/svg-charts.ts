import { html } from 'hono/html';
import type { Markup } from './layout.js';

/** One named row of numbers, a value per label of the chart. */
export interface ChartSeries {
  key: string;
  values: readonly number[];
}

/** What every chart draws: a title, the labels along its axis, its series, and how a value reads. */
export interface ChartInput {
  /** Unique on the page: the chart's title and table are referred to by it. */
  id: string;
  title: string;
  /** The column of the table that holds the labels (`Day`, `Tool`). */
  labelHeading: string;
  labels: readonly string[];
  series: readonly ChartSeries[];
  /** A value as people read it (`1,200`, `3m 20s`); plain numbers by default. */
  format?: (value: number) => string;
}

const WIDTH = 720;
const HEIGHT = 240;
const PAD = { left: 56, right: 12, top: 12, bottom: 28 };
const PLOT_W = WIDTH - PAD.left - PAD.right;
const PLOT_H = HEIGHT - PAD.top - PAD.bottom;
/** Series colours, in order (SVG `fill`/`stroke` attributes: presentation, not CSS, so the CSP allows them). */
const PALETTE = ['#1264a3', '#2eb67d', '#e01e5a', '#ecb22e', '#7c3aed', '#36c5f0', '#8d8d8d', '#b45309'];
/** At most this many labels are written along the x axis; the table has them all. */
const MAX_AXIS_LABELS = 10;

const colour = (index: number) => PALETTE[index % PALETTE.length] ?? '#1264a3';
const plain = (value: number) => value.toLocaleString('en-US');
const fixed = (n: number) => Math.round(n * 10) / 10;

/**
 * Bars per label, the series stacked (requests per day by outcome): one `mark` rectangle per non-zero value,
 * each with its figure as a tooltip.
 */
export function stackedBarChart(chart: ChartInput): Markup {
  const totals = chart.labels.map((_, i) => chart.series.reduce((sum, s) => sum + (s.values[i] ?? 0), 0));
  const y = scale(Math.max(0, ...totals));
  const band = PLOT_W / Math.max(chart.labels.length, 1);
  const marks = chart.labels.flatMap((label, i) => {
    let base = 0;
    return chart.series.flatMap((s, k) => {
      const value = s.values[i] ?? 0;
      if (value <= 0) return [];
      const top = y(base + value);
      const rect = html`<rect class="mark" x="${fixed(PAD.left + i * band + band * 0.1)}" y="${fixed(top)}" width="${fixed(band * 0.8)}" height="${fixed(y(base) - top)}" fill="${colour(k)}"><title>${label} · ${s.key}: ${(chart.format ?? plain)(value)}</title></rect>`;
      base += value;
      return [rect];
    });
  });
  return figure(chart, y, marks);
}

/** Bars per label, the series side by side (requests per tool, p50 and p90 per tool): one `mark` per value. */
export function groupedBarChart(chart: ChartInput): Markup {
  const y = scale(Math.max(0, ...chart.series.flatMap((s) => s.values)));
  const band = PLOT_W / Math.max(chart.labels.length, 1);
  const width = (band * 0.8) / Math.max(chart.series.length, 1);
  const marks = chart.labels.flatMap((label, i) =>
    chart.series.map((s, k) => {
      const value = s.values[i] ?? 0;
      const top = y(value);
      return html`<rect class="mark" x="${fixed(PAD.left + i * band + band * 0.1 + k * width)}" y="${fixed(top)}" width="${fixed(width)}" height="${fixed(y(0) - top)}" fill="${colour(k)}"><title>${label} · ${s.key}: ${(chart.format ?? plain)(value)}</title></rect>`;
    }),
  );
  return figure(chart, y, marks);
}

/** A line per series over the labels (tokens per day): one `mark` dot per value, the line joining them. */
export function lineChart(chart: ChartInput): Markup {
  const y = scale(Math.max(0, ...chart.series.flatMap((s) => s.values)));
  const band = PLOT_W / Math.max(chart.labels.length, 1);
  const x = (i: number) => fixed(PAD.left + i * band + band / 2);
  const marks = chart.series.map((s, k) => {
    const points = s.values.map((v, i) => `${x(i)},${fixed(y(v))}`).join(' ');
    return html`<g><polyline points="${points}" fill="none" stroke="${colour(k)}" stroke-width="2"></polyline>${s.values.map(
      (v, i) =>
        html`<circle class="mark" cx="${x(i)}" cy="${fixed(y(v))}" r="3" fill="${colour(k)}"><title>${chart.labels[i] ?? ''} · ${s.key}: ${(chart.format ?? plain)(v)}</title></circle>`,
    )}</g>`;
  });
  return figure(chart, y, marks);
}

/** A y scale from 0 to a round maximum at least `max`, in SVG coordinates (y grows downwards). */
function scale(max: number): ((value: number) => number) & { top: number } {
  const top = roundUp(max);
  const y = (value: number) => PAD.top + PLOT_H - (value / top) * PLOT_H;
  return Object.assign(y, { top });
}

function roundUp(max: number): number {
  if (max <= 0) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(max));
  const step = [1, 2, 2.5, 5, 10].find((m) => m * magnitude >= max) ?? 10;
  return step * magnitude;
}

/** The chart in its figure: the SVG (titled, described by its table), its legend, and the table it was drawn from. */
function figure(chart: ChartInput, y: ReturnType<typeof scale>, marks: readonly Markup[]): Markup {
  const format = chart.format ?? plain;
  const every = Math.ceil(chart.labels.length / MAX_AXIS_LABELS);
  const band = PLOT_W / Math.max(chart.labels.length, 1);
  const empty = chart.series.length === 0 || chart.labels.length === 0;
  return html`<figure class="chart" id="${chart.id}">
<h2 id="${chart.id}-title">${chart.title}</h2>
<svg role="img" aria-labelledby="${chart.id}-svg-title" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}" xmlns="http://www.w3.org/2000/svg">
<title id="${chart.id}-svg-title">${chart.title}${empty ? ': nothing in this range' : ''}</title>
<g class="axis" stroke="currentColor" stroke-opacity="0.3">
  <line x1="${PAD.left}" y1="${y(0)}" x2="${WIDTH - PAD.right}" y2="${y(0)}"></line>
  <line x1="${PAD.left}" y1="${y(y.top)}" x2="${WIDTH - PAD.right}" y2="${y(y.top)}" stroke-dasharray="4 4"></line>
</g>
<g class="axis-labels" fill="currentColor" font-size="11">
  <text x="${PAD.left - 6}" y="${y(0)}" text-anchor="end">0</text>
  <text x="${PAD.left - 6}" y="${y(y.top) + 4}" text-anchor="end">${format(y.top)}</text>
  ${chart.labels.map((label, i) =>
    i % every === 0
      ? html`<text x="${fixed(PAD.left + i * band + band / 2)}" y="${HEIGHT - 8}" text-anchor="middle">${label}</text>`
      : '',
  )}
</g>
${marks}
</svg>
${legend(chart.series)}
${dataTable(chart, format)}
</figure>`;
}

function legend(series: readonly ChartSeries[]): Markup {
  if (series.length < 2) return html``;
  return html`<ul class="legend">${series.map(
    (s, k) =>
      html`<li><svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill="${colour(k)}"></rect></svg> ${s.key}</li>`,
  )}</ul>`;
}

/** The figures the chart was drawn from, one row per label: readable by a screen reader and copyable. */
function dataTable(chart: ChartInput, format: (value: number) => string): Markup {
  return html`<table class="chart-data" aria-labelledby="${chart.id}-title">
<thead><tr><th scope="col">${chart.labelHeading}</th>${chart.series.map((s) => html`<th scope="col">${s.key}</th>`)}</tr></thead>
<tbody>${chart.labels.map(
    (label, i) =>
      html`<tr><th scope="row">${label}</th>${chart.series.map((s) => html`<td>${format(s.values[i] ?? 0)}</td>`)}</tr>`,
  )}</tbody>
</table>`;
}
