import type { StoredItem } from '../agent/history.js';
import type { ApprovalRecord } from '../approvals/approval.js';
import type { ApprovalService, DecisionResult } from '../approvals/approval-service.js';
import type { ArgumentEditService } from '../approvals/argument-edit-service.js';
import { describeApprovers } from '../approvals/policy.js';
import type { Vote } from '../approvals/ports.js';
import type { ConversationService } from '../conversations/conversation-service.js';
import type { DecisionFollowUp } from '../conversations/decision-follow-up.js';
import type { ThreadRef } from '../conversations/ports.js';
import type { LineReader } from './line-reader.js';

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
  write(`Agent "${AGENT_NAME}" wants to run ${approval.toolName} with arguments:\n`);
  write(`${indent(prettyArguments(approval.editedArguments ?? approval.arguments))}\n`);
  write(
    `  requested by ${approval.requesterId} · may be decided by ${describeApprovers(approval.rule)} · ${approval.id}\n`,
  );
  const applied = approval.rule.appliedRule;
  if (applied)
    write(
      `  rule ${applied.place} (${applied.when})${applied.error ? ` could not be evaluated (${applied.error}), so approval is required` : ''}\n`,
    );
  for (;;) {
    const answer = await reader.next(APPROVAL_QUESTION);
    if (answer === undefined) return 'ended';
    const choice = answer.trim().toLowerCase();
    if (choice === 'y' || choice === 'yes') return decide(deps, approval, 'approve', null);
    if (choice === 'n' || choice === 'no') return decide(deps, approval, 'reject', null);
    if (choice === 'r' || choice === 'reason') {
      const reason = await reader.next('Reason: ');
      if (reason === undefined) return 'ended';
      return decide(deps, approval, 'reject', reason.trim() || null);
    }
    if (choice === 'e' || choice === 'edit') {
      const edited = await reader.next('New arguments (JSON): ');
      if (edited === undefined) return 'ended';
      const result = await deps.edits.submit({
        approvalId: approval.id,
        userId: deps.userId,
        teamId: approval.teamId,
        channelId: approval.channelId,
        json: edited,
      });
      if (result.kind === 'invalid') {
        write(`Not changed: ${result.message}\n`);
        continue;
      }
      if (result.ok) write(`Arguments changed to ${result.approval.editedArguments ?? edited.trim()}\n`);
      return settle(deps, approval, 'approve', result);
    }
    write('Please answer y, n, r or e.\n');
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
      deps.write(`${result.message}\nIt stays pending; someone who may decide it can run:\n`);
      deps.write(`  npm run chat -- --thread ${deps.threadName} --user THEIR_ID\n`);
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
    else if (item.kind === 'assistant_message') deps.write(`  ${AGENT_NAME}> ${item.data.text}\n`);
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
