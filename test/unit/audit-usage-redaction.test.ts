import { describe, expect, it } from 'vitest';
import { auditEvent } from '../../src/audit/audit-event.js';
import { REDACTED, redactValue } from '../../src/redact.js';

describe('redaction keeps token counts', () => {
  it('keeps the usage counts of a run and still redacts tokens, whatever their key', () => {
    const event = auditEvent('run.completed', {
      at: 1,
      payload: {
        turns: 2,
        usage: { promptTokens: 1200, completionTokens: 345, totalTokens: 1545 },
        raw: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12, max_tokens: 100, token_count: 3 },
      },
    });
    expect(event.payload).toEqual({
      turns: 2,
      usage: { promptTokens: 1200, completionTokens: 345, totalTokens: 1545 },
      raw: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12, max_tokens: 100, token_count: 3 },
    });
    expect(
      redactValue({
        token: 123456,
        accessToken: 'abc',
        refreshTokens: ['r1'],
        promptTokens: 'xoxb-not-a-count',
        tokens: { a: 1 },
        csrfToken: 42,
      }),
    ).toEqual({
      token: REDACTED,
      accessToken: REDACTED,
      refreshTokens: REDACTED,
      promptTokens: REDACTED,
      tokens: REDACTED,
      csrfToken: REDACTED,
    });
  });
});
