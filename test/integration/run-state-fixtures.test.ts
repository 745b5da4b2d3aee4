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
    const calls = [parsed.state.pausedTurn, ...parsed.state.frames.map((f) => f.pausedTurn)].flatMap(
      (paused) => paused?.calls ?? [],
    );
    expect(calls.map((c) => c.arguments)).toContain('{"text": "not closed');
  });

  it('a version 1 state reads as the current version: the same run, with no nested agent at work', () => {
    const v1 = JSON.parse(fixture('v1.json'));
    const parsed = parseRunState(fixture('v1.json'));
    if (!parsed.ok) throw new Error(parsed.reason);
    const { schemaVersion, frames, ...rest } = parsed.state;
    expect(schemaVersion).toBe(CURRENT_RUN_STATE_VERSION);
    expect(frames).toEqual([]);
    expect({ schemaVersion: 1, ...rest }).toEqual(v1);
    // Written back, it is a current state that reads again.
    expect(parseRunState(serializeRunState(parsed.state))).toEqual(parsed);
  });

  it('a version 2 state keeps the nested agent at work: its task, its calls and its paused turn', () => {
    const parsed = parseRunState(fixture('v2.json'));
    if (!parsed.ok) throw new Error(parsed.reason);
    const [frame] = parsed.state.frames;
    expect(frame?.agent).toBe('triage');
    expect(frame?.callId).toBe(parsed.state.pausedTurn?.calls[0]?.callId);
    expect(frame?.items[0]?.item).toEqual({
      kind: 'user_message',
      data: { text: 'File the login bug from this thread', userId: 'main' },
    });
    expect(frame?.pausedTurn?.calls.map((c) => c.arguments)).toEqual(['{"text": "not closed']);
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
