import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { reply } from '../support/fake-openai.js';
import { type LocalServer, listenLocal, readBody, sendJson } from '../support/local-server.js';
import { waitUntil } from '../support/wait.js';
import { ADMIN, type ProcessFixture, startProcessFixture } from './process-fixture.js';

interface OtlpAttribute {
  key: string;
  value: {
    stringValue?: string;
    intValue?: string | number;
    boolValue?: boolean;
    arrayValue?: { values: { stringValue?: string }[] };
  };
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: OtlpAttribute[];
}

/** An OpenTelemetry collector's OTLP/HTTP receiver (JSON) on 127.0.0.1: keeps every span and metric name. */
async function startFakeCollector() {
  const spans: OtlpSpan[] = [];
  const metrics = new Map<string, unknown>();
  const bodies: string[] = [];
  const server: LocalServer = await listenLocal(async (req, res) => {
    const body = await readBody(req);
    bodies.push(body);
    const parsed = JSON.parse(body);
    if (req.url === '/v1/traces') {
      for (const rs of parsed.resourceSpans ?? [])
        for (const ss of rs.scopeSpans ?? []) spans.push(...(ss.spans ?? []));
    } else if (req.url === '/v1/metrics') {
      for (const rm of parsed.resourceMetrics ?? [])
        for (const sm of rm.scopeMetrics ?? []) for (const m of sm.metrics ?? []) metrics.set(m.name, m);
    }
    sendJson(res, 200, {});
  });
  return { url: `http://127.0.0.1:${server.port}`, spans, metrics, bodies, close: () => server.close() };
}

const attr = (span: OtlpSpan, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  if (!value) return undefined;
  if (value.arrayValue) return value.arrayValue.values.map((v) => v.stringValue);
  return value.stringValue ?? value.intValue ?? value.boolValue;
};

describe('OpenTelemetry from the real entry point, to a fake OTLP/HTTP collector', () => {
  let f: ProcessFixture;
  let collector: Awaited<ReturnType<typeof startFakeCollector>>;
  beforeEach(async () => {
    f = await startProcessFixture();
    collector = await startFakeCollector();
  });
  afterEach(async () => {
    await f.close();
    await collector.close();
  });

  it('spans of the run, the model calls, the approval and the tool; metrics; no arguments or text', async () => {
    const bot = await f.start({
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'approvals-test',
      OTEL_METRIC_EXPORT_INTERVAL: '200',
      OTEL_BSP_SCHEDULE_DELAY: '50',
    });
    f.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: 'top secret note' } }]));
    await f.mention(bot, 'note this, please');
    const [card] = await f.waitForCards(1);
    if (!card) throw new Error('no card');
    f.model.enqueue(reply.text('Saved your note.'));
    expect((await f.click(bot, card, 'approve', ADMIN)).status).toBe(200);
    await f.waitForText((text) => text === 'Saved your note.');

    const named = (name: string) => collector.spans.filter((s) => s.name === name);
    const expected = { 'agent.run': 1, 'model.request': 2, 'approval.wait': 1, 'tool.execute': 1 };
    await waitUntil(() => Object.entries(expected).every(([name, n]) => named(name).length >= n), {
      timeoutMs: 15_000,
      message: `spans seen: ${JSON.stringify(collector.spans.map((s) => s.name))}`,
    });
    const [run] = named('agent.run');
    const runId = run && attr(run, 'run.id');
    expect(run && attr(run, 'run.status')).toBe('completed');
    expect(named('model.request')).toHaveLength(2);
    const [wait] = named('approval.wait');
    const [tool] = named('tool.execute');
    expect(wait && attr(wait, 'approval.status')).toBe('approved');
    expect(wait && attr(wait, 'approval.deciders')).toEqual([ADMIN]);
    expect(tool && attr(tool, 'tool.name')).toBe('create_note');
    expect(tool && attr(tool, 'tool.outcome')).toBe('ok');
    // One trace per run: every span of the run is a child of agent.run, whichever thread ended it.
    for (const span of [...named('model.request'), wait, tool]) {
      expect(span?.traceId).toBe(run?.traceId);
      expect(span?.parentSpanId).toBe(run?.spanId);
      expect(span && attr(span, 'run.id')).toBe(runId);
    }
    expect(named('model.request').map((s) => Number(attr(s, 'agent.turn')))).toEqual([1, 2]);
    expect(Number(wait?.endTimeUnixNano) - Number(wait?.startTimeUnixNano)).toBeGreaterThan(0);

    await waitUntil(
      () =>
        [
          'approvals.requests',
          'approvals.decisions',
          'approvals.decision_latency',
          'approvals.pending',
          'model.tokens',
          'tools.outcomes',
        ].every((name) => collector.metrics.has(name)),
      { timeoutMs: 15_000, message: 'metrics missing' },
    );
    const all = collector.bodies.join('\n');
    expect(all).toContain('approvals-test');
    expect(all).not.toContain('top secret note');
    expect(all).not.toContain('note this, please');
    expect(all).not.toContain('Saved your note.');
    await bot.kill('SIGTERM');
  }, 60_000);

  it('without OTEL_ endpoints nothing is set up', () => {
    const base = { SLACK_BOT_TOKEN: 'xoxb-1', SLACK_SIGNING_SECRET: 's', OPENAI_API_KEY: 'sk-1' };
    const off = loadConfig({ ...base, OTEL_SERVICE_NAME: 'x' });
    expect(off.ok && off.config.telemetry).toBeUndefined();
    const disabled = loadConfig({
      ...base,
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
      OTEL_SDK_DISABLED: 'true',
    });
    expect(disabled.ok && disabled.config.telemetry).toBeUndefined();
    const on = loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' });
    expect(on.ok && on.config.telemetry).toMatchObject({
      tracesUrl: 'http://c:4318/v1/traces',
      metricsUrl: 'http://c:4318/v1/metrics',
      serviceName: 'slack-approval-agent',
    });
    const grpc = loadConfig({
      ...base,
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
    });
    expect(grpc.ok ? [] : grpc.problems).toEqual([
      'OTEL_EXPORTER_OTLP_PROTOCOL: only http/json is supported (OTLP over HTTP with JSON bodies)',
    ]);
  });
});
