import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CURRENT_RUN_STATE_VERSION, parseRunState, serializeRunState } from '../../src/agent/run-state.js';
import { REPO_ROOT } from '../support/bot-process.js';

/** Frozen: these files are only ever read. A new schema version adds a new file; old ones never change. */
const FIXTURES = join(REPO_ROOT, 'test', 'fixtures', 'run-state');
const fixture = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');

describe('stored run states: versioned, with frozen fixtures', () => {
  it('every released version has a fixture, and the current code reads each one', () => {
    for (let version = 1; version <= CURRENT_RUN_STATE_VERSION; version++) {
      const file = `v${version}.json`;
      expect(existsSync(join(FIXTURES, file)), file).toBe(true);
      const parsed = parseRunState(fixture(file));
      expect(parsed.ok, file).toBe(true);
    }
  });

  it('the current writer writes exactly what its frozen fixture holds (a schema change needs a new version)', () => {
    const json = fixture(`v${CURRENT_RUN_STATE_VERSION}.json`);
    const parsed = parseRunState(json);
    if (!parsed.ok) throw new Error(parsed.reason);
    expect(parsed.state.schemaVersion).toBe(CURRENT_RUN_STATE_VERSION);
    expect(JSON.parse(serializeRunState(parsed.state))).toEqual(JSON.parse(json));
    // Stored call arguments stay byte for byte, malformed ones included.
    expect(parsed.state.pausedTurn?.calls.map((c) => c.arguments)).toContain('{"text": "not closed');
  });

  it('a state from a future version is refused with a clear reason', () => {
    expect(parseRunState(fixture('future-version-99.json'))).toEqual({
      ok: false,
      reason: 'Run state schema version 99 is not supported.',
    });
  });

  it('a state missing a field is refused, naming the field', () => {
    expect(parseRunState(fixture('v1-missing-approval-rounds.json'))).toEqual({
      ok: false,
      reason: 'Run state (schema version 1) is invalid at: approvalRounds.',
    });
  });
});
