import { describe, expect, it } from 'vitest';
import { MAX_TASK_CHARS, sessionTitle, taskUpdate } from '../../src/conversations/run-presenter.js';
import { REFUSAL_MEMORY_MS, StatusWays } from '../../src/slack/progress-indicator.js';

describe('session titles', () => {
  it('take the message on one line, without mentions, at most 200 characters', () => {
    expect(sessionTitle('<@U012ABC> please\n\nadd   a note')).toBe('please add a note');
    const long = sessionTitle('word '.repeat(100)) ?? '';
    expect(long.length).toBeLessThanOrEqual(200);
    expect(long.endsWith('…')).toBe(true);
    expect(sessionTitle('<@U012ABC>   ')).toBeUndefined();
  });
});

describe('tool calls as tasks', () => {
  it('say who may approve a waiting call, and keep outputs short, on one line, without credentials', () => {
    expect(
      taskUpdate({ kind: 'waiting', callId: 'c1', toolName: 'create_note', approvers: '<@U2> or admins' }),
    ).toEqual({
      id: 'c1',
      title: 'create_note',
      status: 'pending',
      output: 'Waiting for approval by <@U2> or admins',
    });
    const settled = taskUpdate({
      kind: 'settled',
      callId: 'c1',
      toolName: 'lookup',
      status: 'ok',
      output: `key sk-abcdefghijklmnopqrstuvwx\n${'x'.repeat(600)}`,
    });
    expect(settled.status).toBe('complete');
    expect(settled.output?.length).toBe(MAX_TASK_CHARS);
    expect(settled.output).toMatch(/^key \[redacted\] x+…$/);
    expect(
      taskUpdate({ kind: 'settled', callId: 'c2', toolName: 't', status: 'rejected', output: '' }),
    ).toEqual({
      id: 'c2',
      title: 't',
      status: 'error',
      output: 'Failed.',
    });
  });
});

describe('what a workspace refused', () => {
  it('is remembered per workspace, one step at a time, for an hour', () => {
    let now = 0;
    const ways = new StatusWays(() => now);
    expect(ways.of('T1')).toBe('session');
    expect(ways.refused('T1', 'session')).toBe('thread_status');
    expect(ways.of('T1')).toBe('thread_status');
    expect(ways.of('T2')).toBe('session');
    expect(ways.refused('T1', 'thread_status')).toBe('reaction');
    // A late answer about the session does not bring back the thread status.
    ways.refused('T1', 'session');
    expect(ways.of('T1')).toBe('reaction');
    now = REFUSAL_MEMORY_MS;
    expect(ways.of('T1')).toBe('session');
  });
});
