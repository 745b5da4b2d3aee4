import type { ApprovalRecord } from './approval.js';
import type { ApprovalService, DecisionRequest, DecisionResult } from './approval-service.js';
import type { Deciders, Viewer } from './deciders.js';
import type { ApprovalStore } from './ports.js';
import { type OrganisationDirectory, reaches, type WorkspacePlace } from './workspace-reach.js';

export type EditDraft =
  | { ok: true; approval: ApprovalRecord; json: string }
  | { ok: false; kind: 'not_found' }
  | { ok: false; kind: 'not_pending'; approval: ApprovalRecord };

export type EditResult = DecisionResult | { ok: false; kind: 'invalid'; message: string };

/** The tools' own argument schemas (the agent's tool registry): what an edit is checked against. */
export interface ArgumentSchemas {
  get(toolName: string):
    | {
        parseArguments(
          raw: string,
        ): { ok: true; args: Record<string, unknown> } | { ok: false; error: string };
      }
    | undefined;
}

export interface ArgumentEditServiceDeps {
  tools: ArgumentSchemas;
  approvals: ApprovalService;
  store: Pick<ApprovalStore, 'get'>;
  deciders: Pick<Deciders, 'maySee'>;
  /** Which workspaces belong to an organisation (installs into several workspaces); else as Slack named it. */
  organisations?: OrganisationDirectory | undefined;
}

/**
 * "Edit, then approve": a person rewrites a pending call's arguments; the edit is validated against the
 * tool's own schema and, when valid, approves the request with the edited arguments (stored beside the
 * originals, which are never overwritten). The runner then executes the edited ones.
 */
export class ArgumentEditService {
  readonly #deps: ArgumentEditServiceDeps;

  constructor(deps: ArgumentEditServiceDeps) {
    this.#deps = deps;
  }

  /**
   * A request this workspace reaches (its own, or on Enterprise Grid one of its organisation: see
   * workspace-reach.ts), to read (e.g. every argument before deciding); undefined when unknown.
   */
  async find(approvalId: string, from: string | WorkspacePlace): Promise<ApprovalRecord | undefined> {
    const approval = await this.#deps.store.get(approvalId);
    const place = typeof from === 'string' ? { teamId: from } : from;
    return approval && (await reaches(approval, place, this.#deps.organisations)) ? approval : undefined;
  }

  /**
   * A request of this workspace for this viewer to read every argument of, when they may see it (see
   * `Deciders.maySee`); undefined when it is unknown or they may not, which look the same.
   */
  async readable(
    approvalId: string,
    teamId: string | WorkspacePlace,
    viewer: Viewer,
  ): Promise<ApprovalRecord | undefined> {
    const approval = await this.find(approvalId, teamId);
    return approval && (await this.#deps.deciders.maySee(approval, viewer)) ? approval : undefined;
  }

  /** The arguments to show in the editor: pretty JSON when they parse, else the raw text the model sent. */
  async draft(approvalId: string, teamId: string): Promise<EditDraft> {
    const approval = await this.find(approvalId, teamId);
    if (!approval) return { ok: false, kind: 'not_found' };
    if (approval.status !== 'pending') return { ok: false, kind: 'not_pending', approval };
    return { ok: true, approval, json: prettyJson(approval.arguments) };
  }

  /** Validates the edited JSON, then decides the request as an approval carrying the edited arguments. */
  async submit(
    request: Omit<DecisionRequest, 'vote' | 'reason' | 'editedArguments'> & { json: string },
  ): Promise<EditResult> {
    const { json: _json, ...decision } = request;
    const approval = await this.find(request.approvalId, request);
    // Unknown here: the decision finds it unknown too, and records the refusal as for any other surface.
    if (!approval) return this.#deps.approvals.decide({ ...decision, vote: 'approve', reason: null });
    const tool = this.#deps.tools.get(approval.toolName);
    if (!tool)
      return { ok: false, kind: 'invalid', message: `The tool ${approval.toolName} is no longer available.` };
    const parsed = tool.parseArguments(request.json);
    if (!parsed.ok) return { ok: false, kind: 'invalid', message: parsed.error };
    const edited = JSON.stringify(parsed.args);
    const original = tool.parseArguments(approval.arguments);
    return this.#deps.approvals.decide({
      ...decision,
      vote: 'approve',
      reason: null,
      // Submitting the arguments unchanged is a plain approval.
      editedArguments: original.ok && JSON.stringify(original.args) === edited ? null : edited,
    });
  }
}

/** Arguments as a person edits them: pretty JSON when they parse, else the text the model sent. */
export function prettyJson(raw: string): string {
  try {
    return JSON.stringify(JSON.parse(raw), null, 2);
  } catch {
    return raw;
  }
}
