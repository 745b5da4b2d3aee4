import { describe, expect, it } from 'vitest';
import { answerParts, safeMarkdown, settledLength, splitAnswer } from '../../src/slack/answer-markdown.js';
import { unescapeMrkdwn } from '../../src/slack/mrkdwn.js';

describe('safeMarkdown', () => {
  it('keeps formatting and person or channel mentions; escapes special mentions and angle links', () => {
    expect(safeMarkdown('**a** <@U012AB> <#C012AB> <!here> <http://x|y> a & b')).toBe(
      '**a** <@U012AB> <#C012AB> &lt;!here&gt; &lt;http://x|y&gt; a &amp; b',
    );
  });

  it('shows the target of every link and cannot be tricked into forming one', () => {
    expect(safeMarkdown('[docs](https://a.example) and [https://b.example](https://b.example)')).toBe(
      'docs (https://a.example) and https://b.example',
    );
    expect(safeMarkdown('[multi\nline](https://evil.example)')).toBe('[multi\nline]\\(https://evil.example)');
    expect(safeMarkdown('[ref]: https://evil.example\n[click][ref]')).toBe(
      '\\[ref]: https://evil.example\n[click][ref]',
    );
  });

  it('gives the same result line by line as for the whole text', () => {
    const text = 'a [x](https://x.example)\n<@U012AB> <!channel>\n[r]: https://e.example\n@everyone';
    const byLine = text
      .split('\n')
      .map((line) => safeMarkdown(line))
      .join('\n');
    expect(byLine).toBe(safeMarkdown(text));
  });
});

describe('splitAnswer', () => {
  it('cuts at paragraphs, then lines, then words, never inside a word', () => {
    expect(splitAnswer('aaaa bbbb\n\ncccc dddd', 12)).toEqual(['aaaa bbbb', 'cccc dddd']);
    expect(splitAnswer('aaaa bbbb cccc', 10)).toEqual(['aaaa bbbb', 'cccc']);
    expect(splitAnswer('x'.repeat(25), 10)).toEqual(['x'.repeat(10), 'x'.repeat(10), 'x'.repeat(5)]);
  });

  it('closes a code block cut in two and reopens it in the next message', () => {
    const parts = splitAnswer(`\`\`\`\n${'line\n'.repeat(6)}\`\`\``, 24);
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(24);
      expect((part.match(/```/g) ?? []).length % 2).toBe(0);
    }
  });

  it('owes from any part on what, made safe again, posts the same parts as the first time', () => {
    const text = [
      'a & b <@U012AB> <!channel> @here [docs](https://a.example) [multi\nline](https://e.example)',
      '[ref]: https://evil.example\n[click][ref] <http://x|y> 1 < 2 > 0 &amp; &lt;',
      `\`\`\`\n${'code & <tag>\n'.repeat(6)}\`\`\``,
      'the end & all',
    ].join('\n\n');
    const parts = answerParts(safeMarkdown(text), 40);
    expect(parts.length).toBeGreaterThan(5);
    for (const [k, part] of parts.entries()) {
      const again = splitAnswer(safeMarkdown(unescapeMrkdwn(part.fromHere)), 40);
      expect(again).toEqual(parts.slice(k).map((p) => p.text));
    }
  });

  it('does not cut an escape in two', () => {
    const parts = splitAnswer('&lt;'.repeat(5), 10);
    expect(parts.every((p) => /^(&lt;)+$/.test(p))).toBe(true);
  });
});

describe('settledLength', () => {
  it('releases finished lines and words, never inside a link, a mention or a bracket', () => {
    expect(settledLength('one\ntwo', 0)).toBe(4);
    expect(settledLength('aaa bbb ccc', 0)).toBe(8);
    expect(settledLength('see [the docs](https://x.example "a b") now', 0)).toBe(40);
    expect(settledLength('see [the docs', 0)).toBe(4);
    expect(settledLength('hi <@U012AB and', 0)).toBe(3);
    expect(settledLength('a < b and', 0)).toBe(6);
    expect(settledLength('done. next line', 6)).toBe(11);
  });

  it('gives the same text piece by piece as at once', () => {
    const text = 'Ask <@U012AB> about [the big plan](https://x.example/p) or <!here> @channel & more words';
    let shown = 0;
    let out = '';
    for (let end = 1; end <= text.length; end += 1) {
      const settled = settledLength(text.slice(0, end), shown);
      out += safeMarkdown(text.slice(shown, settled));
      shown = settled;
    }
    out += safeMarkdown(text.slice(shown));
    expect(out).toBe(safeMarkdown(text));
  });
});
