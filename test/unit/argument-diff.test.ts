import { describe, expect, it } from 'vitest';
import { describeChange, diffArguments, MAX_CHANGES } from '../../src/approvals/argument-diff.js';

describe('diffArguments', () => {
  it('lists each top-level field changed, added or removed, old → new, and nothing unchanged', () => {
    const changes = diffArguments(
      '{"channel":"C1","text":"hi","cc":"U1"}',
      '{"channel":"C1","text":"hello","thread":"1.2"}',
    );
    expect(changes).toEqual([
      { path: 'text', kind: 'changed', old: 'hi', new: 'hello' },
      { path: 'cc', kind: 'removed', old: 'U1' },
      { path: 'thread', kind: 'added', new: '1.2' },
    ]);
    expect(changes.map(describeChange)).toEqual(['text: "hi" → "hello"', '- cc: "U1"', '+ thread: "1.2"']);
  });

  it('goes into nested objects and arrays by path', () => {
    const changes = diffArguments(
      '{"issue":{"title":"a","labels":["bug","p1"],"meta":{"x":1}}}',
      '{"issue":{"title":"a","labels":["bug","p2","new"],"meta":{"x":2,"y":true}}}',
    );
    expect(changes).toEqual([
      { path: 'issue.labels[1]', kind: 'changed', old: 'p1', new: 'p2' },
      { path: 'issue.labels[2]', kind: 'added', new: 'new' },
      { path: 'issue.meta.x', kind: 'changed', old: 1, new: 2 },
      { path: 'issue.meta.y', kind: 'added', new: true },
    ]);
  });

  it('a value that changes type is one change; keys that are not names are quoted', () => {
    expect(diffArguments('{"a b":{"x":1}}', '{"a b":[1]}')).toEqual([
      { path: '["a b"]', kind: 'changed', old: { x: 1 }, new: [1] },
    ]);
  });

  it('redacts like the arguments: a changed secret shows as changed, never its values', () => {
    const changes = diffArguments(
      '{"apiKey":"one-secret","auth":{"password":"p1"},"note":"xoxb-1234567890-abcdefgh"}',
      '{"apiKey":"two-secret","auth":{"password":"p2"},"note":"plain"}',
    );
    expect(changes).toEqual([
      { path: 'apiKey', kind: 'changed', old: '[redacted]', new: '[redacted]' },
      { path: 'auth.password', kind: 'changed', old: '[redacted]', new: '[redacted]' },
      { path: 'note', kind: 'changed', old: '[redacted]', new: 'plain' },
    ]);
    const added = diffArguments('{}', '{"token":"t-123","opts":{"x":"sk-abcdefghijklmnopqrstu"}}');
    expect(JSON.stringify(added)).not.toMatch(/t-123|sk-abc/);
  });

  it('text that is not JSON is compared whole; identical arguments have no change; the list is bounded', () => {
    expect(diffArguments('not json', '{"a":1}')).toEqual([
      { path: '(arguments)', kind: 'changed', old: 'not json', new: { a: 1 } },
    ]);
    expect(diffArguments('{"a":[1,{"b":2}]}', '{"a":[1,{"b":2}]}')).toEqual([]);
    const many = Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`k${i}`, i]));
    expect(diffArguments('{}', JSON.stringify(many))).toHaveLength(MAX_CHANGES);
  });
});
