import { describe, expect, it } from 'vitest';
import { boundToolOutput, cutNote } from '../../src/agent/tool-output-limit.js';
import { prunePayload } from '../../src/audit/retention.js';

/** True when no surrogate stands without its pair (`String.prototype.isWellFormed`, not in ES2022's types). */
const wellFormed = (text: string) => !/\p{Surrogate}/u.test(text);

/** The parts of a cut output: what comes before the note, the note, and what follows it. */
function parts(text: string) {
  const at = text.indexOf('\n[output cut: ');
  const noteEnd = text.indexOf(']', at) + 1;
  return { head: text.slice(0, at), note: text.slice(at + 1, noteEnd), tail: text.slice(noteEnd + 1) };
}

describe('boundToolOutput', () => {
  it('leaves an output of at most the limit whole', () => {
    expect(boundToolOutput('x'.repeat(1000), 1000)).toEqual({ text: 'x'.repeat(1000), cut: null });
    expect(boundToolOutput('', 1000)).toEqual({ text: '', cut: null });
  });

  it('cuts a longer one to at most the limit: its head, a note with the counts, and its end', () => {
    const output = Array.from({ length: 5000 }, (_, i) => `line ${i}`).join('\n');
    const { text, cut } = boundToolOutput(output, 2000);
    expect(text.length).toBeLessThanOrEqual(2000);
    expect(text.length).toBeGreaterThan(1990);
    const { head, note, tail } = parts(text);
    expect(output.startsWith(head)).toBe(true);
    expect(output.endsWith(tail)).toBe(true);
    expect(tail.length).toBeGreaterThan(200);
    expect(head.length).toBeGreaterThan(tail.length * 6);
    const hidden = output.length - head.length - tail.length;
    expect(cut).toEqual({ totalChars: output.length, hiddenChars: hidden });
    expect(note).toBe(cutNote(hidden, output.length));
    expect(cutNote(1_987_654, 2_003_654)).toBe(
      '[output cut: 1,987,654 of 2,003,654 characters not shown; call the tool again with narrower arguments to see more]',
    );
  });

  it('never splits a surrogate pair, wherever the cut falls', () => {
    for (let shift = 0; shift < 4; shift += 1) {
      const output = `${'a'.repeat(shift)}${'😀'.repeat(5000)}${'b'.repeat(shift)}`;
      const { text, cut } = boundToolOutput(output, 1000);
      expect(wellFormed(text), `shift ${shift}`).toBe(true);
      expect(text.length).toBeLessThanOrEqual(1000);
      const { head, tail } = parts(text);
      expect(output.startsWith(head) && output.endsWith(tail)).toBe(true);
      expect(cut?.hiddenChars).toBe(output.length - head.length - tail.length);
    }
  });

  it('the whole output in the audit event is content: retention replaces it by its digest, the counts stay', () => {
    const payload = { tool: 'files__list', ok: true, totalChars: 20_000, hiddenChars: 18_000, result: 'x' };
    const pruned = prunePayload(payload, { at: 0, limit: 'RETENTION_DAYS=90' });
    expect(pruned).toMatchObject({ tool: 'files__list', totalChars: 20_000, hiddenChars: 18_000 });
    expect(pruned?.result).toEqual({ $digest: expect.any(String) });
  });
});
