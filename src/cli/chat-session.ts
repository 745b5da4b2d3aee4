import type { StoredItem } from '../agent/history.js';
import { type ApprovalRecord, callChain, MAX_REASON_LENGTH } from '../approvals/approval.js';
import type { ApprovalService, DecisionResult } from '../approvals/approval-service.js';
import type { ArgumentEditService } from '../approvals/argument-edit-service.js';
import { describeApprovers } from '../approvals/policy.js';
import type { Vote } from '../approvals/ports.js';
import type { ConversationService } from '../conversations/conversation-service.js';
import type { DecisionFollowUp } from '../conversations/decision-follow-up.js';
import type { ThreadRef } from '../conversations/surface-ports.js';
import type { LineReader } from './line-reader.js';
import { plainText } from './terminal-text.js';

export const APPROVAL_QUESTION = 'Approve? [y]es / [n]o / [r]eason / [e]dit ';
const AGENT_NAME = 'agent';
const EARLIER_ITEMS_SHOWN = 20;

export interface ChatSessionDeps {
  conversations: ConversationService;
  approvals: ApprovalService;
  edits: ArgumentEditService;
  followUp: Pick<DecisionFollowUp, 'after'>;
  /** The conversation's id once it exists. */
  conversationId: () => Promise<string | undefined>;
  pendingApprovals: (conversationId: string) => Promise<ApprovalRecord[]>;
  history: (conversationId: string) => Promise<StoredItem[]>;
  thread: ThreadRef;
  threadName: string;
  userId: string;
  reader: LineReader;
  write: (text: string) => void;
}

type Asked = 'decided' | 'left' | 'ended';

/**
 * One terminal conversation: prints what came before, asks again for approvals left pending, then reads
 * messages until the input ends. Decisions go through the same approval service and resume path as a click.
 */
export async function runChatSession(deps: ChatSessionDeps): Promise<void> {
  const { write, reader, thread } = deps;
  write(`Conversation "${deps.threadName}" as ${deps.userId}. Ctrl-D (or /exit) ends it; resume it with:\n`);
  write(`  npm run chat -- --thread ${deps.threadName} --user ${deps.userId}\n`);
  await printEarlier(deps);
  // A run this conversation left running (the terminal closed mid-answer) is finished first.
  const conversationId = await deps.conversationId();
  if (conversationId) await deps.conversations.recover({ conversationId });
  if ((await askPending(deps)) === 'ended') return;
  let messages = 0;
  for (;;) {
    const line = await reader.next('you> ');
    if (line === undefined || line.trim() === '/exit') {
      write('\n');
      return;
    }
    if (line.trim() === '') continue;
    messages += 1;
    await deps.conversations.handleMessage({
      ...thread,
      userId: deps.userId,
      text: line,
      messageTs: `${Date.now()}.${messages}`,
    });
    if ((await askPending(deps)) === 'ended') return;
  }
}

/** Asks about each pending approval once; those nobody here may decide stay pending for another session. */
async function askPending(deps: ChatSessionDeps): Promise<Asked> {
  const left = new Set<string>();
  for (;;) {
    const conversationId = await deps.conversationId();
    const next = conversationId
      ? (await deps.pendingApprovals(conversationId)).find((approval) => !left.has(approval.id))
      : undefined;
    if (!next) return 'decided';
    const asked = await ask(deps, next);
    if (asked === 'ended') return asked;
    if (asked === 'left') left.add(next.id);
  }
}

async function ask(deps: ChatSessionDeps, approval: ApprovalRecord): Promise<Asked> {
  const { write, reader } = deps;
  // A nested agent's call names the agent that asked, and the chain of agents it was called through.
  const agent = approval.agentChain?.at(-1) ?? AGENT_NAME;
  write(`Agent "${agent}" wants to run ${callChain(approval)} with arguments:\n`);
  write(`${indent(prettyArguments(approval.editedArguments ?? approval.arguments))}\n`);
  write(
    `  requested by ${approval.requesterId} · may be decided by ${plainText(describeApprovers(approval.rule))} · ${approval.id}\n`,
  );
  const applied = approval.rule.appliedRule;
  if (applied)
    write(
      `  rule ${applied.place} (${applied.when})${applied.error ? ` could not be evaluated (${applied.error}), so approval is required` : ''}\n`,
    );
  // Told before being asked: a question this person cannot answer would only end in a refusal.
  const permission = await deps.approvals.mayDecide(approval, deps.userId, approval.channelId);
  if (!permission.ok) {
    write(`${plainText(permission.message)}\n`);
    writeStaysPending(deps, 'someone else');
    return 'left';
  }
  for (;;) {
    const answer = await reader.next(APPROVAL_QUESTION);
    if (answer === undefined) return ended(deps);
    const choice = answer.trim().toLowerCase();
    if (choice === 'y' || choice === 'yes') return decide(deps, approval, 'approve', null);
    if (choice === 'n' || choice === 'no') return decide(deps, approval, 'reject', null);
    if (choice === 'r' || choice === 'reason') {
      const reason = await askReason(deps);
      if (reason === 'ended') return ended(deps);
      return decide(deps, approval, 'reject', reason);
    }
    if (choice === 'e' || choice === 'edit') {
      const edited = await askArguments(deps, approval);
      if (edited === 'ended') return ended(deps);
      if (edited === 'cancelled') continue;
      return settle(deps, approval, 'approve', edited);
    }
    write('Please answer y, n, r or e.\n');
  }
}

/** A reason of at most MAX_REASON_LENGTH characters (as in Slack's modal), or null for none. */
async function askReason(deps: ChatSessionDeps): Promise<string | null | 'ended'> {
  for (;;) {
    const reason = await deps.reader.next('Reason: ');
    if (reason === undefined) return 'ended';
    const trimmed = reason.trim();
    if (trimmed.length <= MAX_REASON_LENGTH) return trimmed || null;
    deps.write(
      `Keep the reason under ${MAX_REASON_LENGTH} characters (this one has ${trimmed.length}); type it again.\n`,
    );
  }
}

/**
 * New arguments, asked again until they fit the tool's schema; an empty line goes back to the question.
 * Valid ones are stored and approve the request (the decision's result).
 */
async function askArguments(
  deps: ChatSessionDeps,
  approval: ApprovalRecord,
): Promise<DecisionResult | 'cancelled' | 'ended'> {
  for (;;) {
    const edited = await deps.reader.next('New arguments (JSON, empty line to go back): ');
    if (edited === undefined) return 'ended';
    if (edited.trim() === '') return 'cancelled';
    const result = await deps.edits.submit({
      approvalId: approval.id,
      userId: deps.userId,
      teamId: approval.teamId,
      channelId: approval.channelId,
      json: edited,
    });
    if (result.kind === 'invalid') {
      deps.write(`Not changed: ${result.message}\n`);
      continue;
    }
    if (result.ok) deps.write(`Arguments changed to ${result.approval.editedArguments ?? edited.trim()}\n`);
    return result;
  }
}

/** The input ended (Ctrl-D) while a request waited for an answer: it stays pending, and this is how to resume. */
function ended(deps: ChatSessionDeps): 'ended' {
  deps.write('\n');
  writeStaysPending(deps, 'this person');
  return 'ended';
}

/** How a request left pending is answered later: by this person, or by someone who may decide it. */
function writeStaysPending(deps: ChatSessionDeps, by: 'this person' | 'someone else'): void {
  switch (by) {
    case 'this person':
      deps.write('The request stays pending; answer it later with:\n');
      deps.write(`  npm run chat -- --thread ${deps.threadName} --user ${deps.userId}\n`);
      return;
    case 'someone else':
      deps.write('The request stays pending; someone who may decide it can run:\n');
      deps.write(`  npm run chat -- --thread ${deps.threadName} --user THEIR_NAME\n`);
      return;
  }
}

async function decide(
  deps: ChatSessionDeps,
  approval: ApprovalRecord,
  vote: Vote,
  reason: string | null,
): Promise<Asked> {
  const result = await deps.approvals.decide({
    approvalId: approval.id,
    userId: deps.userId,
    teamId: approval.teamId,
    channelId: approval.channelId,
    vote,
    reason,
  });
  return settle(deps, approval, vote, result);
}

/** Tells the terminal what a decision did, and resumes the run when the decision completed its turn. */
async function settle(
  deps: ChatSessionDeps,
  approval: ApprovalRecord,
  vote: Vote,
  result: DecisionResult,
): Promise<Asked> {
  switch (result.kind) {
    case 'decided': {
      deps.write(`${vote === 'approve' ? 'Approved' : 'Rejected'} by ${deps.userId}.\n`);
      const { run } = await deps.followUp.after(result);
      await run;
      return 'decided';
    }
    case 'counted':
      deps.write(`Your approval is counted (${result.approvers.length} of ${approval.rule.quorum}).\n`);
      await deps.followUp.after(result);
      return 'left';
    case 'not_allowed':
      deps.write(`${plainText(result.message)}\n`);
      writeStaysPending(deps, 'someone else');
      return 'left';
    case 'already_voted':
      deps.write('You have already voted on this request.\n');
      return 'left';
    // Not asked again in this pass: a request past its deadline stays pending until the deadline check.
    case 'already_decided':
      deps.write(`This request is already ${result.approval.status}.\n`);
      return 'left';
    case 'not_found':
      deps.write('This request no longer exists.\n');
      return 'left';
  }
}

async function printEarlier(deps: ChatSessionDeps): Promise<void> {
  const conversationId = await deps.conversationId();
  if (!conversationId) return;
  const said = (await deps.history(conversationId))
    .filter((item) => item.kind === 'user_message' || (item.kind === 'assistant_message' && item.data.text))
    .slice(-EARLIER_ITEMS_SHOWN);
  if (said.length === 0) return;
  deps.write('Earlier in this conversation:\n');
  for (const item of said) {
    if (item.kind === 'user_message') deps.write(`  ${item.data.userId}> ${item.data.text}\n`);
    else if (item.kind === 'assistant_message') deps.write(`  ${AGENT_NAME}> ${plainText(item.data.text)}\n`);
  }
}

function prettyArguments(raw: string): string {
  try {
    return JSON.stringify(JSON.parse(raw), null, 2);
  } catch {
    return raw;
  }
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}
