import { delegationEnd } from '../approvals/delegation.js';
import { parseTimePoint } from '../audit/time-filter.js';
import { escapeMrkdwn } from './mrkdwn.js';

export type ApprovalsCommand =
  | { kind: 'overview' }
  | { kind: 'pending'; page: number }
  | { kind: 'history'; userId?: string; tool?: string; since?: number; page: number }
  | { kind: 'show'; approvalId: string }
  | { kind: 'revoke'; approvalId: string }
  | { kind: 'stats'; since?: number }
  | { kind: 'delegate'; userId: string; until: number }
  | { kind: 'delegations' }
  | { kind: 'undelegate'; userId: string }
  | { kind: 'admins'; change?: { action: 'add' | 'remove'; userId: string } }
  | { kind: 'help'; problem?: string };

const USER = /^<@([UW][A-Z0-9]{2,})(\|[^>]*)?>$|^([UW][A-Z0-9]{2,})$/;
const TOOL = /^[a-z][a-z0-9_]{0,63}$/;
const APPROVAL_ID = /^apr_[A-Za-z0-9]{16,40}$/;

/**
 * Reads the text after `/approvals`. Anything it does not understand becomes the help with a one-line reason,
 * never an error.
 *
 * @example
 * parseApprovalsCommand('history <@U123|ann> create_note since:7d', now)
 * // { kind: 'history', userId: 'U123', tool: 'create_note', since: now - 7d, page: 1 }
 */
export function parseApprovalsCommand(text: string, now: number): ApprovalsCommand {
  const [verb = '', ...args] = text.trim().split(/\s+/).filter(Boolean);
  switch (verb.toLowerCase()) {
    case '':
      return { kind: 'overview' };
    case 'help':
      return { kind: 'help' };
    case 'pending': {
      const options = readOptions(args, now, ['page']);
      return 'problem' in options ? help(options.problem) : { kind: 'pending', page: options.page ?? 1 };
    }
    case 'history': {
      const options = readOptions(args, now, ['page', 'since', 'user', 'tool']);
      return 'problem' in options
        ? help(options.problem)
        : { kind: 'history', ...options, page: options.page ?? 1 };
    }
    case 'stats': {
      const options = readOptions(args, now, ['since']);
      return 'problem' in options ? help(options.problem) : { kind: 'stats', ...options };
    }
    case 'show':
    case 'revoke': {
      const kind = verb.toLowerCase() === 'show' ? 'show' : 'revoke';
      const [id, ...rest] = args;
      if (!id || rest.length > 0 || !APPROVAL_ID.test(id))
        return help(`\`${kind}\` takes one approval ID, such as \`apr_3f9c…\` (shown on each card).`);
      return { kind, approvalId: id };
    }
    case 'admins':
      return admins(args);
    case 'delegations':
      return args.length === 0 ? { kind: 'delegations' } : help('`delegations` takes nothing after it.');
    case 'delegate':
    case 'undelegate':
      return delegation(verb.toLowerCase() === 'delegate' ? 'delegate' : 'undelegate', args, now);
    default:
      return help(`I do not know \`${quote(verb)}\`.`);
  }
}

/** `delegate @bob until:2026-12-24` and `undelegate @bob`. */
function delegation(kind: 'delegate' | 'undelegate', args: readonly string[], now: number): ApprovalsCommand {
  const usage =
    kind === 'delegate'
      ? '`delegate` takes a person and a last day: `/approvals delegate @bob until:2026-12-24`.'
      : '`undelegate` takes a person: `/approvals undelegate @bob`.';
  const [who = '', until, ...rest] = args;
  const match = USER.exec(who);
  const userId = match?.[1] ?? match?.[3];
  if (who.startsWith('@'))
    return help('Pick the person from the list Slack offers after `@`, so I get their user ID.');
  if (!userId || rest.length > 0) return help(usage);
  if (kind === 'undelegate') return until === undefined ? { kind, userId } : help(usage);
  const date = until?.startsWith('until:') ? until.slice('until:'.length) : undefined;
  const end = date === undefined ? undefined : delegationEnd(date);
  if (end === undefined) return help(usage);
  if (end <= now) return help(`\`until:${quote(date ?? '')}\` is in the past; name today or a later day.`);
  return { kind, userId, until: end };
}

/** `admins`, `admins add @ann`, `admins remove @ann`. */
function admins(args: readonly string[]): ApprovalsCommand {
  const [action = '', who = '', ...rest] = args;
  if (action === '') return { kind: 'admins' };
  const usage =
    "`admins` lists this workspace's admins; `admins add @ann` and `admins remove @ann` change them.";
  const verb = action.toLowerCase();
  if ((verb !== 'add' && verb !== 'remove') || rest.length > 0) return help(usage);
  if (who.startsWith('@'))
    return help('Pick the person from the list Slack offers after `@`, so I get their user ID.');
  const match = USER.exec(who);
  const userId = match?.[1] ?? match?.[3];
  return userId ? { kind: 'admins', change: { action: verb, userId } } : help(usage);
}

/** User text shown back inside a code span: short, escaped, no backticks to break out with. */
function quote(text: string): string {
  return escapeMrkdwn(text.slice(0, 40).replace(/`/g, "'"));
}

function help(problem: string): ApprovalsCommand {
  return { kind: 'help', problem };
}

interface Options {
  page?: number;
  since?: number;
  userId?: string;
  tool?: string;
}

type OptionName = 'page' | 'since' | 'user' | 'tool';

function readOptions(
  args: readonly string[],
  now: number,
  allowed: OptionName[],
): Options | { problem: string } {
  const options: Options = {};
  for (const arg of args) {
    const [key, value = ''] = arg.includes(':') && !arg.startsWith('<') ? arg.split(/:(.*)/s) : ['', arg];
    if (key === 'page' && allowed.includes('page') && /^[1-9]\d{0,4}$/.test(value)) {
      options.page = Number(value);
    } else if (key === 'since' && allowed.includes('since')) {
      const since = parseTimePoint(value, now);
      if (since === undefined)
        return { problem: `\`since:${quote(value)}\` is not a time such as \`since:7d\`.` };
      options.since = since;
    } else if (key === '' && allowed.includes('user') && USER.test(value) && !options.userId) {
      const match = USER.exec(value);
      const userId = match?.[1] ?? match?.[3];
      if (userId !== undefined) options.userId = userId;
    } else if (key === '' && allowed.includes('tool') && TOOL.test(value) && !options.tool) {
      options.tool = value;
    } else if (key === '' && value.startsWith('@')) {
      return { problem: `Pick the person from the list Slack offers after \`@\`, so I get their user ID.` };
    } else {
      return { problem: `I did not understand \`${quote(arg)}\` here.` };
    }
  }
  return options;
}
