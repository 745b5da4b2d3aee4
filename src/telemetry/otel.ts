import { createHash } from 'node:crypto';
import {
  type Attributes,
  type Context,
  ROOT_CONTEXT,
  type Span,
  SpanStatusCode,
  TraceFlags,
  trace,
} from '@opentelemetry/api';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import {
  BatchSpanProcessor,
  type IdGenerator,
  RandomIdGenerator,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import type { ChatModel } from '../agent/model.js';
import { modelCallScope } from '../agent/run-context.js';
import type { AuditInput } from '../audit/audit-event.js';
import type { TelemetryConfig } from '../config.js';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Telemetry, TelemetryLookups } from './telemetry.js';

export interface OtelDeps {
  config: TelemetryConfig;
  /** Names this process and thread among the bot's (`service.instance.id`). */
  instanceId: string;
  /** The model name, an attribute of each model call. */
  modelName: string;
  lookups: TelemetryLookups;
  logger: Logger;
}

const hex = (text: string, length: number) =>
  createHash('sha256').update(text).digest('hex').slice(0, length);

/** Every span of a run is in one trace, named by the run: processes and threads that touch it agree. */
function runTrace(runId: string) {
  return { traceId: hex(`trace:${runId}`, 32), spanId: hex(`run:${runId}`, 16) };
}

/** Random ids, except for the one span whose ids are set just before it starts (the run's own span). */
class RunIdGenerator implements IdGenerator {
  readonly #random = new RandomIdGenerator();
  #traceId: string | undefined;
  #spanId: string | undefined;
  /** The ids of the next root span (both are used once, whichever the tracer asks for first). */
  set next(ids: { traceId: string; spanId: string }) {
    this.#traceId = ids.traceId;
    this.#spanId = ids.spanId;
  }
  generateTraceId(): string {
    const id = this.#traceId ?? this.#random.generateTraceId();
    this.#traceId = undefined;
    return id;
  }
  generateSpanId(): string {
    const id = this.#spanId ?? this.#random.generateSpanId();
    this.#spanId = undefined;
    return id;
  }
}

const DECISIONS: Record<string, string> = {
  'approval.approved': 'approved',
  'approval.edited': 'approved',
  'approval.rejected': 'rejected',
  'approval.expired': 'expired',
  'approval.cancelled': 'cancelled',
};

const RUN_ENDS: Record<string, string> = {
  'run.completed': 'completed',
  'run.failed': 'failed',
  'run.cancelled': 'cancelled',
};

/**
 * OpenTelemetry over OTLP/HTTP (JSON): spans `agent.run`, `model.request`, `tool.execute` and `approval.wait`,
 * metrics of requests, decisions, decision latency, pending approvals, model tokens and tool outcomes. Spans and
 * metrics carry ids, tool names, outcomes and counts: never arguments or message text. Nothing is global: the
 * providers are this object's own.
 */
export function startOtel(deps: OtelDeps): Telemetry {
  const { config, lookups, logger } = deps;
  const resource = resourceFromAttributes({
    ...config.resourceAttributes,
    'service.name': config.serviceName,
    'service.instance.id': deps.instanceId,
  });
  const ids = new RunIdGenerator();
  const tracerProvider = new TracerProvider({
    resource,
    idGenerator: ids,
    spanProcessors: config.tracesUrl
      ? [
          new BatchSpanProcessor({
            exporter: new OTLPTraceExporter({ url: config.tracesUrl, headers: config.headers }),
            scheduledDelayMillis: config.spanDelayMs,
          }),
        ]
      : [],
  });
  const meterProvider = new MeterProvider({
    resource,
    readers: config.metricsUrl
      ? [
          new PeriodicExportingMetricReader({
            exporter: new OTLPMetricExporter({ url: config.metricsUrl, headers: config.headers }),
            exportIntervalMillis: config.metricIntervalMs,
            exportTimeoutMillis: Math.min(30_000, config.metricIntervalMs),
          }),
        ]
      : [],
  });
  const tracer = tracerProvider.getTracer('slack-approval-agent');
  const meter = meterProvider.getMeter('slack-approval-agent');
  const requests = meter.createCounter('approvals.requests', {
    description: 'Tool calls that needed a decision',
  });
  const decisions = meter.createCounter('approvals.decisions', { description: 'Requests ended, by outcome' });
  const latency = meter.createHistogram('approvals.decision_latency', {
    description: 'From request to decision',
    unit: 's',
  });
  const tokens = meter.createCounter('model.tokens', { description: 'Model tokens, by model and type' });
  const tools = meter.createCounter('tools.outcomes', {
    description: 'Tool executions, by tool and outcome',
  });
  const pending = meter.createObservableGauge('approvals.pending', { description: 'Requests waiting now' });
  pending.addCallback(async (result) => {
    try {
      for (const { teamId, count } of await lookups.pending())
        result.observe(count, { 'slack.team.id': teamId });
    } catch (error) {
      logger.debug('pending approvals not measured', { error: describeError(error) });
    }
  });

  /** The context of a run's spans: children of its `agent.run` span, wherever that span is ended. */
  const underRun = (runId: string | null): Context => {
    if (!runId) return ROOT_CONTEXT;
    const { traceId, spanId } = runTrace(runId);
    return trace.setSpanContext(ROOT_CONTEXT, {
      traceId,
      spanId,
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
    });
  };
  const scopeOf = (event: AuditInput): Attributes => ({
    ...(event.teamId ? { 'slack.team.id': event.teamId } : {}),
    ...(event.enterpriseId ? { 'slack.enterprise.id': event.enterpriseId } : {}),
    ...(event.conversationId ? { 'conversation.id': event.conversationId } : {}),
    ...(event.runId ? { 'run.id': event.runId } : {}),
    ...(event.approvalId ? { 'approval.id': event.approvalId } : {}),
  });
  const toolOf = (event: AuditInput) =>
    typeof event.payload.tool === 'string' ? event.payload.tool : 'unknown';

  // Times this thread saw itself; the database answers for the others.
  const requestedAt = new Map<string, number>();
  const startedAt = new Map<string, number>();
  const remember = (map: Map<string, number>, key: string, at: number) => {
    if (map.size >= 10_000) map.delete(map.keys().next().value ?? '');
    map.set(key, at);
  };

  const onEvent = async (event: AuditInput): Promise<void> => {
    const decision = DECISIONS[event.kind];
    const runEnd = RUN_ENDS[event.kind];
    if (event.kind === 'run.started' && event.runId) {
      remember(startedAt, event.runId, event.at);
    } else if (event.kind === 'approval.requested') {
      if (event.approvalId) remember(requestedAt, event.approvalId, event.at);
      requests.add(1, {
        'tool.name': toolOf(event),
        ...(event.teamId ? { 'slack.team.id': event.teamId } : {}),
      });
    } else if (decision && event.approvalId) {
      const since =
        requestedAt.get(event.approvalId) ??
        (await lookups.approvalRequestedAt(event.approvalId)) ??
        event.at;
      requestedAt.delete(event.approvalId);
      decisions.add(1, { 'approval.outcome': decision, 'tool.name': toolOf(event) });
      // Everyone whose vote counted (a quorum has several), else whoever decided; none for an expiry.
      const voters = await lookups.voters(event.approvalId);
      const deciders = voters.length > 0 ? voters : event.actor === 'system' ? [] : [event.actor];
      latency.record((event.at - since) / 1000, { 'approval.outcome': decision });
      const span = tracer.startSpan(
        'approval.wait',
        {
          startTime: since,
          attributes: {
            ...scopeOf(event),
            'tool.name': toolOf(event),
            'approval.status': decision,
            'approval.deciders': deciders,
          },
        },
        underRun(event.runId),
      );
      span.end(event.at);
    } else if (event.kind === 'tool.finished') {
      const ok = event.payload.ok === true;
      const start = typeof event.payload.startedAt === 'number' ? event.payload.startedAt : event.at;
      const duration = typeof event.payload.durationMs === 'number' ? event.payload.durationMs : 0;
      tools.add(1, { 'tool.name': toolOf(event), 'tool.outcome': ok ? 'ok' : 'error' });
      const span = tracer.startSpan(
        'tool.execute',
        {
          startTime: start,
          attributes: { ...scopeOf(event), 'tool.name': toolOf(event), 'tool.outcome': ok ? 'ok' : 'error' },
        },
        underRun(event.runId),
      );
      if (!ok) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end(start + duration);
    } else if (runEnd && event.runId) {
      const start = startedAt.get(event.runId) ?? (await lookups.runStartedAt(event.runId)) ?? event.at;
      startedAt.delete(event.runId);
      ids.next = runTrace(event.runId);
      const span = tracer.startSpan('agent.run', {
        root: true,
        startTime: start,
        attributes: { ...scopeOf(event), 'run.status': runEnd },
      });
      if (runEnd === 'failed') span.setStatus({ code: SpanStatusCode.ERROR });
      span.end(event.at);
    }
  };

  return {
    committed(events) {
      void (async () => {
        for (const event of events) await onEvent(event);
      })().catch((error: unknown) =>
        logger.warn('telemetry of audit events failed', { error: describeError(error) }),
      );
    },
    model(model: ChatModel): ChatModel {
      return {
        async complete(request) {
          const scope = modelCallScope.getStore();
          const span: Span = tracer.startSpan(
            'model.request',
            {
              attributes: {
                'gen_ai.request.model': request.model ?? deps.modelName,
                ...(scope
                  ? {
                      'slack.team.id': scope.teamId,
                      'conversation.id': scope.conversationId,
                      'run.id': scope.runId,
                      'agent.turn': scope.turn,
                    }
                  : {}),
              },
            },
            underRun(scope?.runId ?? null),
          );
          try {
            const response = await model.complete(request);
            span.setAttributes({
              'gen_ai.usage.input_tokens': response.usage.promptTokens,
              'gen_ai.usage.output_tokens': response.usage.completionTokens,
              'model.tool_calls': response.toolCalls.length,
            });
            tokens.add(response.usage.promptTokens, {
              'gen_ai.request.model': request.model ?? deps.modelName,
              'token.type': 'prompt',
            });
            tokens.add(response.usage.completionTokens, {
              'gen_ai.request.model': request.model ?? deps.modelName,
              'token.type': 'completion',
            });
            return response;
          } catch (error) {
            span.setStatus({
              code: SpanStatusCode.ERROR,
              message: error instanceof Error ? error.name : 'error',
            });
            throw error;
          } finally {
            span.end();
          }
        },
      };
    },
    async shutdown() {
      await Promise.allSettled([tracerProvider.shutdown(), meterProvider.shutdown()]);
    },
  };
}
