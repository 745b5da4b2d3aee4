/** Every Slack action_id and callback_id the app uses, defined once. */
export const ACTION_IDS = {
  approve: 'approval:approve',
  approveThread: 'approval:approve_thread',
  edit: 'approval:edit',
  reject: 'approval:reject',
  /** Opens the arguments in full, in a modal (never decides anything). */
  viewArguments: 'approval:view_arguments',
  /** Another page of that modal. */
  argumentsPage: 'approval:arguments_page',
  /** A request's checkbox in App Home: selects it for a batch decision (decides nothing by itself). */
  select: 'approval:select',
  /** App Home: approve every selected request. */
  batchApprove: 'approval:batch_approve',
  /** App Home: reject every selected request, after one reason in a modal. */
  batchReject: 'approval:batch_reject',
  /** App Home, for an admin the policy refuses: opens the justification form (see break-glass.ts). */
  breakGlass: 'approval:break_glass',
  /** On the review card of a break-glass approval: another admin acknowledges it. */
  acknowledgeBreakGlass: 'approval:break_glass_ack',
} as const;

/** Matches the buttons that decide at once (the others open a modal first). */
export const DECISION_ACTION = /^approval:(approve|approve_thread)$/;

/** Modals of the approval card, and their inputs (block_id and action_id). */
export const CALLBACK_IDS = {
  rejectModal: 'approval:reject_modal',
  editModal: 'approval:edit_modal',
  batchRejectModal: 'approval:batch_reject_modal',
  breakGlassModal: 'approval:break_glass_modal',
} as const;

export const MODAL_INPUTS = {
  reason: { blockId: 'reason', actionId: 'reason_input' },
  arguments: { blockId: 'arguments', actionId: 'arguments_input' },
  justification: { blockId: 'justification', actionId: 'justification_input' },
} as const;
