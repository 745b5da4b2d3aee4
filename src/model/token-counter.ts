import type { CountTokens, TokenCounting } from '../agent/context-budget.js';
import { encodingOf, type TokenEncoding } from '../known-models.js';

/**
 * How much more than OpenAI's newest encoding a model whose name is unknown is assumed to need: open models'
 * tokenizers (Llama, Qwen, Mistral, Gemma) cut most text into more tokens than o200k_base does, and a count that
 * errs large only summarises a little early, while one that errs small makes the server refuse.
 */
const ESTIMATE_FACTOR = 1.25;

/** UTF-8 bytes of one UTF-16 code unit, at most: no token of a byte-level encoding is shorter than a byte. */
const MAX_BYTES_PER_UNIT = 3;

/**
 * Characters of text whose counts are kept, the most recently used first: each turn of a thread counts the same
 * older messages again, and a count is much slower than a lookup. About 8 MB at most.
 */
const CACHED_CHARS = 4_000_000;

/** Remembers the counts of recent texts, so that each turn only counts what is new. */
function cached(count: CountTokens): CountTokens {
  const counts = new Map<string, number>();
  let chars = 0;
  return (text) => {
    const known = counts.get(text);
    if (known !== undefined) {
      counts.delete(text);
      counts.set(text, known);
      return known;
    }
    const tokens = count(text);
    if (text.length > CACHED_CHARS / 4) return tokens;
    counts.set(text, tokens);
    chars += text.length;
    for (const [oldest] of counts) {
      if (chars <= CACHED_CHARS) break;
      counts.delete(oldest);
      chars -= oldest.length;
    }
    return tokens;
  };
}

/** Text that reads like a special token (`<|endoftext|>`) is counted as plain text, never refused. */
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

async function encodingCounter(encoding: Exclude<TokenEncoding, 'estimate'>): Promise<CountTokens> {
  const { countTokens } =
    encoding === 'cl100k_base'
      ? await import('gpt-tokenizer/encoding/cl100k_base')
      : await import('gpt-tokenizer/encoding/o200k_base');
  return (text) => (text === '' ? 0 : countTokens(text, PLAIN_TEXT));
}

/**
 * Counts tokens with `gpt-tokenizer` (OpenAI's BPE encodings in plain JavaScript), loaded at the first count so
 * that neither start-up nor a process that never calls the model pays for its tables.
 */
export function createTokenCounter(model: string): TokenCounting {
  const encoding = encodingOf(model);
  const factor = encoding === 'estimate' ? ESTIMATE_FACTOR : 1;
  let loaded: Promise<CountTokens> | undefined;
  return {
    bound: (text) => Math.ceil(text.length * MAX_BYTES_PER_UNIT * factor),
    counter() {
      loaded ??= encodingCounter(encoding === 'estimate' ? 'o200k_base' : encoding).then((exact) =>
        cached((text) => Math.ceil(exact(text) * factor)),
      );
      return loaded;
    },
  };
}
