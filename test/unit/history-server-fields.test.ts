import { describe, expect, it } from 'vitest';
import { historyItemSchema, historyToMessages, type StoredItem } from '../../src/agent/history.js';

describe('history with server fields', () => {
  it('items written before server fields existed still load and read as before', () => {
    const old = [
      { kind: 'user_message', data: { text: 'hi', userId: 'U1' } },
      { kind: 'tool_call', data: { callId: 'c1', name: 'list_notes', arguments: '{}' } },
      { kind: 'assistant_message', data: { text: 'Done.' } },
    ].map((item) => historyItemSchema.parse(item));
    const stored: StoredItem[] = old.map((item, n) => ({
      ...item,
      seq: n,
      runId: 'r1',
      turn: n === 2 ? 2 : 1,
    }));
    expect(historyToMessages(stored)).toEqual([
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: null,
        toolCalls: [{ callId: 'c1', name: 'list_notes', arguments: '{}' }],
      },
      { role: 'tool', callId: 'c1', content: 'The tool call did not complete; no output was recorded.' },
      { role: 'assistant', content: 'Done.', toolCalls: [] },
    ]);
  });

  it('a turn stored for its server fields alone sends content null with its calls and the fields verbatim', () => {
    const serverFields = { reasoning_content: 'why', nested: { a: [1, { b: null }] } };
    const stored: StoredItem[] = [
      { kind: 'assistant_message', data: { text: '', serverFields }, seq: 1, runId: 'r1', turn: 1 },
      {
        kind: 'tool_call',
        data: {
          callId: 'c1',
          name: 'list_notes',
          arguments: '{}',
          serverFields: { extra_content: { x: 1 } },
        },
        seq: 2,
        runId: 'r1',
        turn: 1,
      },
    ];
    const [assistant] = historyToMessages(stored);
    expect(assistant).toEqual({
      role: 'assistant',
      content: null,
      serverFields,
      toolCalls: [
        { callId: 'c1', name: 'list_notes', arguments: '{}', serverFields: { extra_content: { x: 1 } } },
      ],
    });
  });
});
