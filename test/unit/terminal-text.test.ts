import { describe, expect, it } from 'vitest';
import { plainText } from '../../src/cli/terminal-text.js';

describe('plainText: Slack markup for the terminal', () => {
  it('mentions, channels, user groups, links, dates and escapes become plain text', () => {
    expect(plainText('Rejected by <@alice>, ask <@U0BOB|bob>')).toBe('Rejected by alice, ask bob');
    expect(plainText('in <#C0123|general> or <#C0456>')).toBe('in #general or #C0456');
    expect(plainText('decided by <!subteam^S0123> or <!subteam^S0456|@oncall>')).toBe(
      'decided by user group S0123 or @oncall',
    );
    expect(plainText('<!here> look')).toBe('@here look');
    expect(plainText('see <https://x.example/a|the guide> or <https://y.example>')).toBe(
      'see the guide (https://x.example/a) or https://y.example',
    );
    expect(plainText('on <!date^1700000000^{date_short}|2023-11-14>')).toBe('on 2023-11-14');
    expect(plainText('a &lt;b&gt; &amp; c')).toBe('a <b> & c');
  });

  it('text without markup is unchanged, including angle brackets that are not Slack tokens', () => {
    expect(plainText('x < y and y > z')).toBe('x < y and y > z');
    expect(plainText('<not a token>')).toBe('<not a token>');
  });
});
