import { describe, expect, it } from 'vitest';
import { shortenedForPage } from '../../src/web/pages/shortened-values.js';

describe('shortenedForPage', () => {
  it('cuts long strings anywhere in a payload, saying how many characters were left out', () => {
    const payload = { tool: 'list', result: 'a'.repeat(5_000), nested: [{ text: 'b'.repeat(12) }], n: 3 };
    expect(shortenedForPage(payload, 10)).toEqual({
      tool: 'list',
      result: `${'a'.repeat(10)}… [4,990 more characters: \`npm run audit -- export\` has them]`,
      nested: [{ text: `${'b'.repeat(10)}… [2 more characters: \`npm run audit -- export\` has them]` }],
      n: 3,
    });
  });

  it('leaves short values alone and never splits a surrogate pair', () => {
    expect(shortenedForPage({ a: 'short', b: null, c: true }, 10)).toEqual({ a: 'short', b: null, c: true });
    const cut = shortenedForPage(`${'x'.repeat(9)}😀tail`, 10);
    expect(cut).toBe(`${'x'.repeat(9)}… [6 more characters: \`npm run audit -- export\` has them]`);
  });
});
