import { describe, expect, it } from 'vitest';
import { buildTrends, DAY_MS, OTHERS, TOP_TOKEN_SERIES } from '../../src/approvals/approval-trends.js';
import { bucketMedian, bucketPercentile, bucketWait, waitBucket } from '../../src/approvals/wait-buckets.js';
import { lineChart, PALETTE, stackedBarChart } from '../../src/web/pages/svg-charts.js';

const render = async (markup: unknown) => String(await markup);

/** WCAG's relative luminance of a `#rrggbb` colour. */
function luminance(hex: string): number {
  const [r = 0, g = 0, b = 0] = [1, 3, 5].map((at) => {
    const channel = Number.parseInt(hex.slice(at, at + 2), 16) / 255;
    return channel <= 0.03928 ? channel / 12.92 : ((channel + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}
const contrast = (a: string, b: string) => {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return ((light ?? 0) + 0.05) / ((dark ?? 0) + 0.05);
};

describe('server-side SVG charts', () => {
  it('draws every series in a colour that stands out 3:1 on a white page and on a dark one', () => {
    // The browser's page background in each scheme: white, and Chromium's dark canvas.
    for (const background of ['#ffffff', '#121212'])
      for (const colour of PALETTE)
        expect(contrast(colour, background), `${colour} on ${background}`).toBeGreaterThanOrEqual(3);
  });

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
  it('takes percentiles by nearest rank over the wait buckets, within 5 % of the wait at that rank', () => {
    const waits = [1, 999, 60_000, 61_000, 3_600_000, 86_400_000, 7 * 86_400_000];
    for (const wait of waits) {
      const middle = bucketWait(waitBucket(wait));
      expect(Math.abs(middle - wait) / wait, `${wait} ms`).toBeLessThanOrEqual(0.05);
    }
    const counted = [
      { bucket: waitBucket(10_000), count: 1 },
      { bucket: waitBucket(20_000), count: 1 },
      { bucket: waitBucket(30_000), count: 1 },
      { bucket: waitBucket(40_000), count: 1 },
    ];
    expect(bucketPercentile(counted, 0.5)).toBe(bucketWait(waitBucket(20_000)));
    expect(bucketPercentile(counted, 0.9)).toBe(bucketWait(waitBucket(40_000)));
    expect(bucketPercentile([{ bucket: waitBucket(7), count: 3 }], 0.9)).toBe(bucketWait(waitBucket(7)));
    expect(bucketPercentile([], 0.5)).toBeNull();
    // The median of an even count is the mean of the two middle waits, as /approvals stats always gave it.
    const middle = (bucketWait(waitBucket(20_000)) + bucketWait(waitBucket(30_000))) / 2;
    expect(bucketMedian(counted)).toBe(middle);
    expect(
      bucketMedian([
        { bucket: waitBucket(60_000), count: 1 },
        { bucket: waitBucket(3_600_000), count: 1 },
      ]),
    ).toBe((bucketWait(waitBucket(60_000)) + bucketWait(waitBucket(3_600_000))) / 2);
    expect(bucketMedian([])).toBeNull();
  });

  it('sums the people past the largest into one line, so the chart stays readable', () => {
    const tokens = Array.from({ length: TOP_TOKEN_SERIES + 2 }, (_, i) => ({
      day: 10,
      series: 'person' as const,
      key: `U${i}`,
      tokens: 100 - i,
    }));
    const trends = buildTrends(
      { requestsByDay: [], waits: [], tools: [], deadlines: [], tokens },
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
