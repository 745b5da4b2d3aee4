import { describe, expect, it } from 'vitest';
import { parseApprovalsCommand } from '../../src/slack/parse-approvals-command.js';

const NOW = Date.parse('2026-06-01T00:00:00Z');
const DAY = 86_400_000;

describe('parseApprovalsCommand: admins', () => {
  it('lists, adds and removes by user ID; anything else is the help', () => {
    expect(parseApprovalsCommand('admins', NOW)).toEqual({ kind: 'admins' });
    expect(parseApprovalsCommand('admins add <@U0123ABC|ann>', NOW)).toEqual({
      kind: 'admins',
      change: { action: 'add', userId: 'U0123ABC' },
    });
    expect(parseApprovalsCommand('admins REMOVE W0123ABC', NOW)).toEqual({
      kind: 'admins',
      change: { action: 'remove', userId: 'W0123ABC' },
    });
    for (const bad of [
      'admins add',
      'admins add @ann',
      'admins grant <@U0123ABC>',
      'admins add <@U0123ABC> x',
    ])
      expect(parseApprovalsCommand(bad, NOW)).toMatchObject({ kind: 'help' });
  });
});

describe('parseApprovalsCommand', () => {
  it('reads every form of the command', () => {
    expect(parseApprovalsCommand('', NOW)).toEqual({ kind: 'overview' });
    expect(parseApprovalsCommand('  help ', NOW)).toEqual({ kind: 'help' });
    expect(parseApprovalsCommand('pending', NOW)).toEqual({ kind: 'pending', page: 1 });
    expect(parseApprovalsCommand('PENDING page:3', NOW)).toEqual({ kind: 'pending', page: 3 });
    expect(parseApprovalsCommand('history <@U0123ABC|ann> delete_note since:7d page:2', NOW)).toEqual({
      kind: 'history',
      userId: 'U0123ABC',
      tool: 'delete_note',
      since: NOW - 7 * DAY,
      page: 2,
    });
    expect(parseApprovalsCommand('history <@W0123ABC>', NOW)).toEqual({
      kind: 'history',
      userId: 'W0123ABC',
      page: 1,
    });
    expect(parseApprovalsCommand('show apr_0123456789abcdef0123', NOW)).toEqual({
      kind: 'show',
      approvalId: 'apr_0123456789abcdef0123',
    });
    expect(parseApprovalsCommand('stats since:2026-05-01', NOW)).toEqual({
      kind: 'stats',
      since: Date.parse('2026-05-01'),
    });
  });

  it('turns anything else into the help with a reason, escaping what the user typed', () => {
    const cases: [string, string][] = [
      ['frobnicate', 'I do not know `frobnicate`'],
      ['pending page:0', 'I did not understand `page:0`'],
      ['history @ann', 'Pick the person from the list'],
      ['history since:soon', '`since:soon` is not a time'],
      ['show', '`show` takes one approval ID'],
      ['show 42', '`show` takes one approval ID'],
      ['stats delete_note', 'I did not understand `delete_note`'],
      ['<!channel>', 'I do not know `&lt;!channel&gt;`'],
    ];
    for (const [text, problem] of cases) {
      const parsed = parseApprovalsCommand(text, NOW);
      expect(parsed.kind).toBe('help');
      expect(parsed.kind === 'help' ? parsed.problem : '').toContain(problem);
    }
  });
});

describe('parseApprovalsCommand: delegation', () => {
  const now = Date.UTC(2026, 0, 5, 9);
  it('reads delegate, delegations and undelegate; until: covers the whole named day (UTC)', () => {
    expect(parseApprovalsCommand('delegate <@U0BOB|bob> until:2026-12-24', now)).toEqual({
      kind: 'delegate',
      userId: 'U0BOB',
      until: Date.UTC(2026, 11, 25),
    });
    expect(parseApprovalsCommand('delegations', now)).toEqual({ kind: 'delegations' });
    expect(parseApprovalsCommand('undelegate <@U0BOB>', now)).toEqual({
      kind: 'undelegate',
      userId: 'U0BOB',
    });
  });

  it('refuses a missing or impossible date, a past day, a typed @name, extra words', () => {
    const problem = (text: string) => {
      const command = parseApprovalsCommand(text, now);
      return command.kind === 'help' ? command.problem : undefined;
    };
    expect(problem('delegate <@U0BOB>')).toContain('`delegate` takes a person and a last day');
    expect(problem('delegate <@U0BOB> until:2026-02-30')).toContain(
      '`delegate` takes a person and a last day',
    );
    expect(problem('delegate <@U0BOB> until:2026-01-04')).toBe(
      '`until:2026-01-04` is in the past; name today or a later day.',
    );
    expect(problem('delegate @bob until:2026-12-24')).toContain('Pick the person from the list');
    expect(problem('undelegate <@U0BOB> now')).toContain('`undelegate` takes a person');
    expect(problem('delegations all')).toBe('`delegations` takes nothing after it.');
  });
});
