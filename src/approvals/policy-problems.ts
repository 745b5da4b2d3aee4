import type { z } from 'zod';

const RULE_FIELDS =
  'requireApproval, approvers, allowSelfApproval, quorum, expiresAfter, remindAfter, allowStandingApproval, standingApprovalExpiresAfter, approvalChannel, notify, escalateAfter, escalateTo, risk, preview';

/** How to fix a bad value, by the field it belongs to. */
const FIXES: Record<string, string> = {
  requireApproval: 'use true or false',
  allowSelfApproval: 'use true or false',
  allowStandingApproval: 'use true or false',
  approvers:
    'use a list of "requester", "admins", "conversation", Slack user IDs (U… or W…) and user group IDs (S…)',
  quorum: 'use a whole number of at least 1 (how many different people must approve)',
  expiresAfter: 'use a duration such as "30m", "24h" or "7d", or null for never',
  remindAfter: 'use a duration such as "30m", "24h" or "7d", or null for never',
  approvalChannel: 'use a channel ID such as C012ABCDEF (channel details → About), or null',
  escalateAfter: 'use a duration such as "30m", "2h" or "1d", or null for never',
  escalateTo:
    'use a list of "admins", Slack user IDs (U… or W…) and user group IDs (S…) who may also decide once the request is escalated',
  notify:
    'use a list of "thread" (the card in the conversation) and "dm" (a copy to each person who may decide)',
  risk: 'use "low", "medium", "high" or "critical"',
  preview: 'use a template such as "Create issue {{args.title}} in {{args.repo}}"',
  defaults: `use an object with any of ${RULE_FIELDS}`,
  tools: 'use an object whose keys are tool names and whose values are rules',
  teams:
    'use an object whose keys are team IDs (T…) and whose values have "defaults" and "tools", as the file itself',
  team: 'use an object with "defaults" and "tools", as the file itself has',
  rules: 'use a list of rules, each with "when" (a CEL expression) and any rule field',
  when: 'use a CEL expression over args, tool, requester, channel, team and agent, such as "args.channel == \'C0SANDBOX\'"',
};

/** `tools.delete_note.approvers[1]` */
export function jsonPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out || '(top level)';
}

/** One zod issue as "file: path: what is wrong; how to fix it". */
export function policyProblem(file: string, issue: z.core.$ZodIssue): string {
  const where = jsonPath(issue.path);
  // Within a workspace's section (`teams.T0123.…`) the places are those of the file itself.
  const inTeam = issue.path[0] === 'teams' && issue.path.length >= 2;
  const path = inTeam ? issue.path.slice(2) : issue.path;
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((k) => `"${k}"`).join(', ');
    const allowed =
      path.length > 0
        ? `a rule may set ${RULE_FIELDS}`
        : inTeam
          ? `a team's section may have "defaults" and "tools"`
          : 'the file may have "defaults", "tools", "teams" and "postMessageLinkPreviews"';
    return `${file}: ${where}: unknown field ${keys}; ${allowed}`;
  }
  const field = [...path].reverse().find((key): key is string => typeof key === 'string');
  const tool = path[0] === 'tools' && path.length === 2;
  const fix = tool
    ? FIXES.defaults
    : field
      ? FIXES[field]
      : inTeam
        ? FIXES.team
        : 'use an object with "defaults" and "tools"';
  return `${file}: ${where}: ${issue.message}${fix ? `; ${fix}` : ''}`;
}
