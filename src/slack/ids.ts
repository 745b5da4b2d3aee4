/** Every Slack action_id and callback_id the app uses, defined once. */
export const ACTION_IDS = {
  approve: 'approval:approve',
  reject: 'approval:reject',
} as const;

/** Matches the decision buttons of approval cards. */
export const DECISION_ACTION = /^approval:(approve|reject)$/;
