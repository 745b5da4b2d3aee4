import { createHash } from 'node:crypto';
import { type ApprovalRule, agentFields, DEFAULT_AGENT, standingExpiry } from '../approvals/approval.js';
import { limitChecks } from '../approvals/approval-limits.js';
import type { ApprovalPolicy } from '../approvals/policy.js';
import { argumentsForRules } from '../approvals/policy-rules.js';
import type { GrantorCheck, StandingApproval, StandingApprovalStore } from '../approvals/ports.js';
import { type AuditInput, auditEvent } from '../audit/audit-event.js';
import type { Clock } from '../clock.js';
import type { IdGenerator } from '../ids.js';
import type { Logger } from '../logger.js';
import { type PreviewRequest, previewCall } from './call-preview.js';
import type { HistoryItem, ToolCall } from './history.js';
import type { NewApproval, RunRecord } from './ports.js';
import { readableArguments, runScope } from './run-events.js';
import type { AgentTool, ParsedArguments } from './tool.js';
import { toolContext, toolOutput } from './tool-call-io.js';
import type { ToolRegistry } from './tool-registry.js';

type ApprovalRequirement =
  | { required: false }
  | { required: true; rule: ApprovalRule; preview: Omit<PreviewRequest, 'tool' | 'parsed'> };

/**
 * Whether a call must wait for a person. Fails closed: arguments that do not parse need approval whenever the
 * tool could need it at all, without asking the tool's predicate; only a tool that never needs approval
 * reports the parse error straight to the model.
 */
async function approvalRequirement(
  policy: ApprovalPolicy,
  tool: AgentTool,
  call: ToolCall,
  parsed: ParsedArguments,
  run: RunRecord,
  agent: string,
): Promise<ApprovalRequirement> {
  const context = toolContext(run);
  const facts = {
    args: argumentsForRules(parsed, call.arguments),
    tool: tool.name,
    requester: run.requesterId,
    channel: run.channelId,
    team: run.teamId,
    agent,
  };
  const { requireApproval, rule, preview: template } = policy.forCall(facts);
  const required = { required: true, rule, preview: { template, facts, context } } as const;
  const mode = requireApproval ?? tool.approvalMode;
  if (mode === false) return { required: false };
  if (mode === true || !parsed.ok) return required;
  return (await tool.needsApproval(parsed.args, context)) ? required : { required: false };
}

export interface CallPlannerDeps {
  tools: ToolRegistry;
  policy: ApprovalPolicy;
  standing: Pick<StandingApprovalStore, 'find'>;
  /** Re-checks a grantor's rights when their grant is used; without it no grant is used. */
  grantors?: GrantorCheck;
  clock: Clock;
  newId: IdGenerator;
  /** Where a preview left out (failed, too slow) is reported. */
  logger?: Logger;
  /** How long a preview may take (default 2 s). */
  previewTimeoutMs?: number;
}

/** The agent whose calls are planned: the tools it has, and the agents it was called through (outermost first). */
export interface CallingAgent {
  tools: ToolRegistry;
  chain: readonly string[];
}

/** What a model turn's calls need before any of them runs. */
export interface CallPlan {
  /** Requests to store with the turn: pending, or approved by a standing approval. */
  approvals: NewApproval[];
  audit: AuditInput[];
  /** What to say in the thread (a call approved automatically), said only if it is stored approved. */
  notes: { approvalId: string; text: string }[];
  /** Calls that already have their output (an unknown tool); it was appended to the turn's items. */
  done: Set<string>;
}

/**
 * Decides, for each call of a model turn, whether it needs a person: the policy (failing closed on arguments
 * that do not parse), then the conversation's "approve for this thread" grants.
 */
export class CallPlanner {
  readonly #deps: CallPlannerDeps;

  constructor(deps: CallPlannerDeps) {
    this.#deps = deps;
  }

  /**
   * `caller` is who makes the calls: the bot's own agent (the default: every tool, no chain), or a nested
   * agent with its own tools and the chain of agents it was called through.
   */
  async plan(
    run: RunRecord,
    calls: readonly ToolCall[],
    items: HistoryItem[],
    caller: CallingAgent = { tools: this.#deps.tools, chain: [] },
  ): Promise<CallPlan> {
    const plan: CallPlan = { approvals: [], audit: [], notes: [], done: new Set() };
    const asked: { approval: NewApproval; preview: Promise<string | undefined> }[] = [];
    const agent = caller.chain.at(-1) ?? DEFAULT_AGENT;
    for (const call of calls) {
      const tool = caller.tools.get(call.name);
      if (!tool) {
        const output = `Unknown tool "${call.name}". Available tools: ${caller.tools.names().join(', ')}.`;
        items.push(toolOutput(call, output, 'error'));
        plan.done.add(call.callId);
        continue;
      }
      const parsed = tool.parseArguments(call.arguments);
      const requirement = await approvalRequirement(this.#deps.policy, tool, call, parsed, run, agent);
      if (!requirement.required) continue;
      const approval = {
        ...this.#newApproval(call, requirement.rule, run),
        ...(caller.chain.length > 0 ? { agentChain: caller.chain } : {}),
      };
      // A standing approval covers only calls whose arguments parse: a malformed call always asks a person.
      const found =
        parsed.ok && requirement.rule.allowStandingApproval
          ? await this.#deps.standing.find(run.conversationId, call.name)
          : undefined;
      const grant = found && (await this.#usable(found, requirement.rule, run)) ? found : undefined;
      if (grant) {
        plan.approvals.push({
          ...approval,
          automatic: { decidedBy: grant.grantedBy, originApprovalId: grant.originApprovalId },
        });
        plan.audit.push(this.#automaticApproval(run, call, approval.id, grant));
        plan.notes.push({
          approvalId: approval.id,
          text: `\`${call.name}\` auto-approved (approved for this thread by <@${grant.grantedBy}>)`,
        });
      } else {
        const { logger, previewTimeoutMs } = this.#deps;
        const preview = previewCall(
          { tool, parsed, ...requirement.preview },
          { ...(logger ? { logger } : {}), ...(previewTimeoutMs ? { timeoutMs: previewTimeoutMs } : {}) },
        );
        asked.push({ approval, preview });
      }
    }
    // Previews are computed side by side, each bounded in time, before anything is stored or posted.
    for (const { approval, preview } of asked) {
      const text = await preview;
      const withPreview = text === undefined ? approval : { ...approval, preview: text };
      plan.approvals.push(withPreview);
      plan.audit.push(this.#approvalRequested(run, withPreview));
    }
    return plan;
  }

  /**
   * A grant covers a call while it is younger than the rule's standing expiry and its grantor could still
   * approve the call today; it never lets its grantor approve their own request where self-approval is not
   * allowed.
   */
  async #usable(grant: StandingApproval, rule: ApprovalRule, run: RunRecord): Promise<boolean> {
    const { requesterId, teamId, enterpriseId } = run;
    const life = standingExpiry(rule);
    if (life !== null && grant.grantedAt + life <= this.#deps.clock.now()) return false;
    if (!rule.allowSelfApproval && grant.grantedBy === requesterId) return false;
    const workspace = { teamId, enterpriseId };
    return (await this.#deps.grantors?.mayStillGrant(rule, requesterId, grant.grantedBy, workspace)) ?? false;
  }

  #approvalRequested(run: RunRecord, approval: NewApproval): AuditInput {
    return auditEvent('approval.requested', {
      at: this.#deps.clock.now(),
      actor: run.requesterId,
      ...runScope(run),
      approvalId: approval.id,
      payload: {
        tool: approval.toolName,
        callId: approval.callId,
        arguments: readableArguments(approval.arguments),
        ...agentFields(approval.agentChain),
        rule: approval.rule,
        ...(approval.rule.risk ? { risk: approval.rule.risk } : {}),
        ...(approval.preview === undefined ? {} : { preview: approval.preview }),
      },
    });
  }

  /** A call a standing approval covers: an automatic decision by the grantor, pointing to the original. */
  #automaticApproval(
    run: RunRecord,
    call: ToolCall,
    approvalId: string,
    grant: StandingApproval,
  ): AuditInput {
    return auditEvent('approval.approved', {
      at: this.#deps.clock.now(),
      actor: grant.grantedBy,
      ...runScope(run),
      approvalId,
      payload: {
        tool: call.name,
        callId: call.callId,
        arguments: readableArguments(call.arguments),
        automatic: true,
        originApprovalId: grant.originApprovalId,
      },
    });
  }

  #newApproval(call: ToolCall, rule: ApprovalRule, run: RunRecord): NewApproval {
    const now = this.#deps.clock.now();
    const limits = limitChecks(rule, {
      teamId: run.teamId,
      tool: call.name,
      place: rule.appliedRule?.place,
      requesterId: run.requesterId,
      channelId: run.channelId,
    });
    return {
      ...(limits.length > 0 ? { limits } : {}),
      id: this.#deps.newId('apr'),
      callId: call.callId,
      toolName: call.name,
      arguments: call.arguments,
      argumentsHash: createHash('sha256').update(call.arguments).digest('hex'),
      rule,
      expiresAt: rule.expiresAfterMs ? now + rule.expiresAfterMs : null,
      remindAt: rule.remindAfterMs ? now + rule.remindAfterMs : null,
    };
  }
}
