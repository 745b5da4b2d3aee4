/**
 * What is known of a model from its name: the tokens its context holds and how its text is counted. Names are
 * matched by prefix, the longest first, after any provider prefix (`openai/gpt-4o` reads as `gpt-4o`); a model
 * this list does not know gets `DEFAULT_CONTEXT_TOKENS` and an estimate that errs large.
 */

/** The context of a model whose name says nothing (most OpenAI-compatible servers' models): 128,000 tokens. */
export const DEFAULT_CONTEXT_TOKENS = 128_000;

/** How a model's tokens are counted: one of OpenAI's encodings exactly, or an estimate above it. */
export type TokenEncoding = 'o200k_base' | 'cl100k_base' | 'estimate';

interface KnownModel {
  prefix: string;
  contextTokens: number;
  encoding: Exclude<TokenEncoding, 'estimate'>;
}

/** OpenAI's published context windows (input and output together). */
const KNOWN_MODELS: readonly KnownModel[] = [
  { prefix: 'gpt-5-chat', contextTokens: 128_000, encoding: 'o200k_base' },
  { prefix: 'gpt-5', contextTokens: 400_000, encoding: 'o200k_base' },
  { prefix: 'gpt-4.1', contextTokens: 1_047_576, encoding: 'o200k_base' },
  { prefix: 'gpt-4.5', contextTokens: 128_000, encoding: 'o200k_base' },
  { prefix: 'gpt-4o', contextTokens: 128_000, encoding: 'o200k_base' },
  { prefix: 'chatgpt-4o', contextTokens: 128_000, encoding: 'o200k_base' },
  { prefix: 'gpt-oss', contextTokens: 131_072, encoding: 'o200k_base' },
  { prefix: 'o1-mini', contextTokens: 128_000, encoding: 'o200k_base' },
  { prefix: 'o1', contextTokens: 200_000, encoding: 'o200k_base' },
  { prefix: 'o3', contextTokens: 200_000, encoding: 'o200k_base' },
  { prefix: 'o4-mini', contextTokens: 200_000, encoding: 'o200k_base' },
  { prefix: 'gpt-4-turbo', contextTokens: 128_000, encoding: 'cl100k_base' },
  { prefix: 'gpt-4-32k', contextTokens: 32_768, encoding: 'cl100k_base' },
  { prefix: 'gpt-4', contextTokens: 8_192, encoding: 'cl100k_base' },
  { prefix: 'gpt-3.5-turbo', contextTokens: 16_385, encoding: 'cl100k_base' },
];

function knownModel(model: string): KnownModel | undefined {
  const name = (model.split('/').at(-1) ?? model).toLowerCase();
  return KNOWN_MODELS.filter((known) => name.startsWith(known.prefix)).sort(
    (a, b) => b.prefix.length - a.prefix.length,
  )[0];
}

/** The context window of `model`, when its name is known; else `DEFAULT_CONTEXT_TOKENS`. */
export function contextTokensOf(model: string): number {
  return knownModel(model)?.contextTokens ?? DEFAULT_CONTEXT_TOKENS;
}

/** How the tokens of `model` are counted: its own encoding when its name is known, else an estimate. */
export function encodingOf(model: string): TokenEncoding {
  return knownModel(model)?.encoding ?? 'estimate';
}
