import { isSecretKey, REDACTED, redactValue } from '../redact.js';

/** One difference between the arguments a model sent and those a person approved. */
export type ArgumentChange =
  | { path: string; kind: 'changed'; old: unknown; new: unknown }
  | { path: string; kind: 'added'; new: unknown }
  | { path: string; kind: 'removed'; old: unknown };

/** Changes listed at most; the rest are left out (a card and an audit row stay readable). */
export const MAX_CHANGES = 50;
/** Deeper than this, a subtree is compared as one value. */
const MAX_DEPTH = 20;

/**
 * What a person changed in a call's arguments: each field (nested objects and arrays by path, such as
 * `options.labels[1]`) that was changed, added or removed, in document order. Values are redacted as the
 * arguments are everywhere (secret keys and credential-looking strings), yet a changed secret still shows as
 * changed. Text that is not JSON is compared as one value at the root (`(arguments)`). Pure.
 *
 * @example
 * diffArguments('{"text":"hi","channel":"C1"}', '{"text":"hello","channel":"C1"}');
 * // [{ path: 'text', kind: 'changed', old: 'hi', new: 'hello' }]
 */
export function diffArguments(before: string, after: string): ArgumentChange[] {
  const changes: ArgumentChange[] = [];
  walk(parsed(before), parsed(after), [], false, changes);
  return changes;
}

function parsed(text: string): unknown {
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

type Segment = string | number;

function walk(old: unknown, next: unknown, path: Segment[], secret: boolean, out: ArgumentChange[]): void {
  if (sameJson(old, next)) return;
  const containers = bothObjects(old, next) || (Array.isArray(old) && Array.isArray(next));
  if (containers && path.length < MAX_DEPTH) {
    const a = old as Record<string, unknown>;
    const b = next as Record<string, unknown>;
    const keys = Array.isArray(old)
      ? Array.from({ length: Math.max(old.length, (next as unknown[]).length) }, (_, i) => i)
      : [...new Set([...Object.keys(a), ...Object.keys(b)])];
    for (const key of keys) {
      const inner = [...path, key];
      const hidden = secret || (typeof key === 'string' && isSecretKey(key, a[key] ?? b[key]));
      if (!(key in a)) push(out, { path: show(inner), kind: 'added', new: shown(b[key], hidden) });
      else if (!(key in b)) push(out, { path: show(inner), kind: 'removed', old: shown(a[key], hidden) });
      else walk(a[key], b[key], inner, hidden, out);
    }
    return;
  }
  push(out, { path: show(path), kind: 'changed', old: shown(old, secret), new: shown(next, secret) });
}

function push(out: ArgumentChange[], change: ArgumentChange): void {
  if (out.length < MAX_CHANGES) out.push(change);
}

function bothObjects(a: unknown, b: unknown): boolean {
  const plain = (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v);
  return plain(a) && plain(b);
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function shown(value: unknown, secret: boolean): unknown {
  return secret ? REDACTED : redactValue(value);
}

/** `options.labels[1]`; a key that is not a plain name is quoted (`["a b"]`); the root is `(arguments)`. */
function show(path: readonly Segment[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(key)) out += out === '' ? key : `.${key}`;
    else out += `[${JSON.stringify(key)}]`;
  }
  return out || '(arguments)';
}

/** One change as a line for people: `path: old → new`, `+ path: new`, `- path: old` (values as JSON). */
export function describeChange(change: ArgumentChange): string {
  switch (change.kind) {
    case 'changed':
      return `${change.path}: ${shortJson(change.old)} → ${shortJson(change.new)}`;
    case 'added':
      return `+ ${change.path}: ${shortJson(change.new)}`;
    case 'removed':
      return `- ${change.path}: ${shortJson(change.old)}`;
  }
}

function shortJson(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

/** Arguments as the audit log keeps them: parsed when they are JSON, else the text as it was. */
export function readable(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    return json;
  }
}
