import { describe, expect, it } from 'vitest';
import { parseApprovalsCommand } from '../../src/slack/parse-approvals-command.js';

const NOW = Date.parse('2026-06-01T00:00:00Z');
const DAY = 86_400_000;

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
