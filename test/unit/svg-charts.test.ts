import { describe, expect, it } from 'vitest';
import {
  buildTrends,
  DAY_MS,
  nearestRank,
  OTHERS,
  TOP_TOKEN_SERIES,
} from '../../src/approvals/approval-trends.js';
import { lineChart, stackedBarChart } from '../../src/web/pages/svg-charts.js';

const render = async (markup: unknown) => String(await markup);

describe('server-side SVG charts', () => {
  it('escapes every label and key, in the image and in its table', async () => {
    const svg = await render(
      stackedBarChart({
        id: 'c',
        title: 'Requests <b>',
        labelHeading: 'Tool',
        labels: ['<script>alert(1)</script>'],
        series: [{ key: '"><img src=x onerror=alert(1)>', values: [3] }],
      }),
    );
    expect(svg).not.toContain('<script>');
    expect(svg).not.toContain('<img');
    expect(svg).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(svg).toContain('role="img"');
    expect(svg.match(/class="mark"/g)).toHaveLength(1);
  });

  it('draws one dot per value of each line, zeros included', async () => {
    const svg = await render(
      lineChart({
        id: 'l',
        title: 'Tokens',
        labelHeading: 'Day',
        labels: ['a', 'b', 'c'],
        series: [
          { key: 'U1', values: [1, 0, 2] },
          { key: 'U2', values: [0, 0, 0] },
        ],
      }),
    );
    expect(svg.match(/<circle class="mark"/g)).toHaveLength(6);
  });
});

describe('the charts’ figures', () => {
  it('takes percentiles by nearest rank, a value that occurred', () => {
    expect(nearestRank([10, 20, 30, 40], 0.5)).toBe(20);
    expect(nearestRank([10, 20, 30, 40], 0.9)).toBe(40);
    expect(nearestRank([7], 0.9)).toBe(7);
  });

  it('sums the people past the largest into one line, so the chart stays readable', () => {
    const runs = Array.from({ length: TOP_TOKEN_SERIES + 2 }, (_, i) => ({
      runId: `r${i}`,
      teamId: 'T1',
      userId: `U${i}`,
      promptTokens: 100 - i,
      completionTokens: 0,
      recorded: true,
      tools: [],
      at: DAY_MS * 10,
    }));
    const trends = buildTrends(
      { requestsByDay: [], waits: [], tools: [], deadlines: [], runs },
      { teamId: 'T1', since: DAY_MS * 10, until: DAY_MS * 10 + 1 },
    );
    expect(trends.tokens.byPerson).toHaveLength(TOP_TOKEN_SERIES + 1);
    expect(trends.tokens.byPerson.at(-1)).toEqual({
      key: OTHERS,
      perDay: [100 - TOP_TOKEN_SERIES + (100 - TOP_TOKEN_SERIES - 1)],
      total: 100 - TOP_TOKEN_SERIES + (100 - TOP_TOKEN_SERIES - 1),
    });
  });
});
