import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { RunHandedOver, RunStopped } from '../../src/agent/ports.js';
import { UndeliveredAnswer } from '../../src/conversations/run-presenter.js';
import { AppError, describeError } from '../../src/errors.js';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const SOURCES = sourceFiles(SRC).map((path) => ({
  path: relative(SRC, path),
  text: readFileSync(path, 'utf8'),
}));

/** The codes of the `ErrorCode` union, read from its declaration. */
function declaredCodes(): string[] {
  const errors = SOURCES.find((file) => file.path === 'errors.ts')?.text ?? '';
  const union = /export type ErrorCode =([^;]*);/.exec(errors)?.[1] ?? '';
  return [...union.matchAll(/\|\s*'([a-z_.]+)'/g)].map((match) => match[1] ?? '');
}

/** Whether some file other than errors.ts raises `code`, spelled out or as `prefix.${…}` with its suffix. */
function raised(code: string): boolean {
  const [prefix, suffix] = code.split('.');
  return SOURCES.some(
    (file) =>
      file.path !== 'errors.ts' &&
      (file.text.includes(`'${code}'`) ||
        (file.text.includes(`\`${prefix}.\${`) && file.text.includes(`'${suffix}'`))),
  );
}

describe('AppError', () => {
  it('carries its code, its message and its cause', () => {
    const cause = new Error('disk full');
    const error = new AppError('run.not_found', 'Run r1 not found', { cause });
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ code: 'run.not_found', message: 'Run r1 not found', cause });
  });

  it('reads as a plain error where people and the model see it, and a subclass by its own name', () => {
    expect(describeError(new AppError('tool.invalid_argument', 'Unknown time zone "Mars"'))).toBe(
      'Error: Unknown time zone "Mars"',
    );
    expect(describeError(new RunStopped('r1', 'U1'))).toBe('RunStopped: Run r1 was stopped by U1');
  });

  it('is what a handed over, stopped or undelivered run throws, each with its code', () => {
    expect(new RunHandedOver('r1').code).toBe('run.handed_over');
    expect(new RunStopped('r1', 'U1').code).toBe('run.stopped');
    expect(new UndeliveredAnswer('the rest').code).toBe('surface.undelivered_answer');
  });
});

describe('error codes in src/', () => {
  it('declares a closed list of codes, each raised somewhere', () => {
    const codes = declaredCodes();
    expect(codes.length).toBeGreaterThan(10);
    expect(codes.filter((code) => !raised(code))).toEqual([]);
  });

  it('throws no bare Error: every thrown error carries a code', () => {
    const bare = SOURCES.filter((file) => /throw new Error\(/.test(file.text)).map((file) => file.path);
    expect(bare).toEqual([]);
  });
});
