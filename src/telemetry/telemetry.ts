import type { ChatModel } from '../agent/model.js';
import type { AuditInput } from '../audit/audit-event.js';

/**
 * What the bot reports to an observability stack: audit events once committed (runs, approvals, tools) and
 * model calls. The OpenTelemetry implementation (otel.ts) is loaded only when an OTEL_ endpoint is set.
 */
export interface Telemetry {
  /** Events of a committed transaction, in order. */
  committed(events: readonly AuditInput[]): void;
  /** The model, with each call measured. */
  model(model: ChatModel): ChatModel;
  /** Exports what is pending and stops. */
  shutdown(): Promise<void>;
}

/** What the telemetry reads from the database: times it did not see itself (another thread or process). */
export interface TelemetryLookups {
  approvalRequestedAt(approvalId: string): Promise<number | undefined>;
  runStartedAt(runId: string): Promise<number | undefined>;
  /** Who voted on a request, in order (several with a quorum). */
  voters(approvalId: string): Promise<string[]>;
  /** Pending approvals per workspace, for the gauge. */
  pending(): Promise<{ teamId: string; count: number }[]>;
}
