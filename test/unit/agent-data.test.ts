import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { historyToMessages, type StoredItem } from '../../src/agent/history.js';
import { initialRunState, parseRunState, serializeRunState } from '../../src/agent/run-state.js';
import { defineTool, parseToolArguments } from '../../src/agent/tool.js';
import { canonicalJson, GENESIS_HASH, hashEvent } from '../../src/audit/hash-chain.js';
import { redactText, redactValue } from '../../src/redact.js';

describe('run state', () => {
  it('round-trips the current version and refuses unknown or future versions by name', () => {
    const state = { ...initialRunState(), turn: 3 };
    expect(parseRunState(serializeRunState(state))).toEqual({ ok: true, state });
    expect(parseRunState(JSON.stringify({ ...state, schemaVersion: 99 }))).toEqual({
      ok: false,
      reason: 'Run state schema version 99 is not supported.',
    });
    expect(parseRunState('{nope')).toMatchObject({ ok: false });
    const { turn: _turn, ...missing } = state;
    expect(parseRunState(JSON.stringify(missing))).toMatchObject({
      ok: false,
      reason: expect.stringContaining('turn'),
    });
  });

  it('never copies history: its size does not depend on the conversation', () => {
    expect(serializeRunState(initialRunState()).length).toBeLessThan(200);
  });
});

describe('historyToMessages', () => {
  let seq = 0;
  const item = (i: Omit<StoredItem, 'runId' | 'turn' | 'seq'>, turn = 1): StoredItem =>
    ({ ...i, seq: ++seq, runId: 'r', turn }) as StoredItem;
  it('groups an assistant turn, orders outputs by call, and fills a missing output', () => {
    const messages = historyToMessages([
      { kind: 'user_message', data: { text: 'hi', userId: 'U1' }, seq: 0, runId: 'r', turn: 0 },
      item({ kind: 'assistant_message', data: { text: 'working' } }),
      item({ kind: 'tool_call', data: { callId: 'a', name: 't', arguments: '{}' } }),
      item({ kind: 'tool_call', data: { callId: 'b', name: 't', arguments: '{}' } }),
      item({ kind: 'tool_output', data: { callId: 'b', name: 't', output: 'B', status: 'ok' } }),
    ]);
    expect(messages).toEqual([
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: 'working',
        toolCalls: [expect.objectContaining({ callId: 'a' }), expect.objectContaining({ callId: 'b' })],
      },
      { role: 'tool', callId: 'a', content: expect.stringContaining('did not complete') },
      { role: 'tool', callId: 'b', content: 'B' },
    ]);
  });
});

describe('tool arguments', () => {
  const schema = z.object({ id: z.number().int() });
  it('accept a valid object and explain every other case', () => {
    expect(parseToolArguments('{"id":1}', schema)).toEqual({ ok: true, args: { id: 1 } });
    expect(parseToolArguments('{"id":', schema)).toMatchObject({
      ok: false,
      error: expect.stringContaining('not valid JSON'),
    });
    expect(parseToolArguments('[1]', schema)).toMatchObject({
      ok: false,
      error: 'The arguments must be a JSON object.',
    });
    expect(parseToolArguments('null', schema)).toMatchObject({ ok: false });
    expect(parseToolArguments('{"id":"1"}', schema)).toMatchObject({
      ok: false,
      error: expect.stringContaining('id'),
    });
  });

  it('defineTool sends a plain JSON schema to the model and evaluates a predicate on parsed arguments', async () => {
    const tool = defineTool({
      name: 'big',
      description: 'd',
      parameters: schema,
      needsApproval: (a) => a.id > 10,
      execute: ({ id }) => String(id),
    });
    expect(tool.jsonSchema).toMatchObject({ type: 'object', properties: { id: { type: 'integer' } } });
    expect(tool.jsonSchema).not.toHaveProperty('$schema');
    const context = {
      teamId: 'T',
      conversationId: 'c',
      channelId: 'C',
      threadTs: '1',
      runId: 'r',
      requesterId: 'U',
    };
    expect([
      await tool.needsApproval({ id: 11 }, context),
      await tool.needsApproval({ id: 1 }, context),
    ]).toEqual([true, false]);
    expect(tool.approvalMode).toBe('predicate');
  });
});

describe('audit hashing and redaction', () => {
  it('canonical JSON sorts keys at every depth', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[1,{"y":2,"z":1}]},"b":1}',
    );
  });

  it('the hash depends on the previous hash, the sequence and every field', () => {
    const event = {
      at: 1,
      actor: 'U1',
      kind: 'run.started' as const,
      teamId: 'T',
      conversationId: null,
      runId: 'r',
      approvalId: null,
      payload: { a: 1 },
    };
    const h1 = hashEvent(GENESIS_HASH, 1, event);
    expect(h1).toMatch(/^[0-9a-f]{64}$/);
    expect(hashEvent(GENESIS_HASH, 2, event)).not.toBe(h1);
    expect(hashEvent(h1, 1, event)).not.toBe(h1);
    expect(hashEvent(GENESIS_HASH, 1, { ...event, payload: { a: 2 } })).not.toBe(h1);
  });

  it('redacts secret keys and credential-looking values', () => {
    expect(
      redactValue({
        token: 'x',
        nested: { api_key: 'y', note: 'my key is sk-abcdefghijklmnopqrstuv' },
        list: ['xoxb-1234567890-abc'],
      }),
    ).toEqual({
      token: '[redacted]',
      nested: { api_key: '[redacted]', note: 'my key is [redacted]' },
      list: ['[redacted]'],
    });
    expect(redactText('AKIAABCDEFGHIJKLMNOP')).toBe('[redacted]');
  });
});
