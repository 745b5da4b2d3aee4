import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { judgeLimits, type LimitCheck, limitChecks } from '../../src/approvals/approval-limits.js';
import { limitNote, limitOutcome, limitOutput } from '../../src/approvals/limit-outcome.js';
import { builtInPolicy } from '../../src/approvals/policy.js';
import { parsePolicyText } from '../../src/approvals/policy-file.js';
import { toolNames } from '../../src/tools/built-in-tools.js';

const DAY = 86_400_000;
const NOW = Date.UTC(2025, 2, 1, 12, 0);
const facts = { teamId: 'T1', tool: 'create_note', place: undefined, requesterId: 'U1', channelId: 'C1' };
const check = (max: number, windowMs = DAY, per: 'requester' | 'team' = 'requester'): LimitCheck =>
  limitChecks({ limits: [{ per, max, windowMs }] }, facts)[0] as LimitCheck;
const uses = (c: LimitCheck, ...ago: number[]) => new Map([[c.key, ago.map((a) => NOW - a)]]);

describe('approval limits: the rule', () => {
  it('keys a limit by team, tool or rule, and the scope value it names', () => {
    const [byRequester, byChannel, byTeam] = limitChecks(
      {
        limits: [
          { per: 'requester', max: 1, windowMs: DAY },
          { per: 'channel', max: 1, windowMs: DAY },
          { per: 'team', max: 1, windowMs: DAY },
        ],
      },
      { ...facts, place: 'tools.create_note.rules[0]' },
    );
    expect(byRequester?.key).toBe('T1|create_note|tools.create_note.rules[0]|requester:U1');
    expect(byChannel?.key).toBe('T1|create_note|tools.create_note.rules[0]|channel:C1');
    expect(byTeam?.key).toBe('T1|create_note|tools.create_note.rules[0]|team:T1');
    expect(limitChecks({}, facts)).toEqual([]);
  });

  it('is over once max requests were counted in the window; older ones do not count', () => {
    const c = check(2);
    expect(judgeLimits([c], uses(c, 1000), NOW)).toEqual({ over: false });
    expect(judgeLimits([c], uses(c, 1000, DAY, DAY + 5), NOW)).toEqual({ over: false });
    const verdict = judgeLimits([c], uses(c, 1000, 5000, 9000), NOW);
    // Three in the window, max two: it frees when the second most recent leaves the window.
    expect(verdict).toEqual({
      over: true,
      reached: { per: 'requester', max: 2, windowMs: DAY, count: 3, resetsAt: NOW - 5000 + DAY },
    });
  });

  it('of several limits passed, reports the one that resets last', () => {
    const hourly = check(1, 3_600_000);
    const daily = check(3, DAY, 'team');
    const times = new Map([
      [hourly.key, [NOW - 60_000]],
      [daily.key, [NOW - 10 * 3_600_000, NOW - 2 * 3_600_000, NOW - 60_000]],
    ]);
    const verdict = judgeLimits([hourly, daily], times, NOW);
    expect(verdict.over && verdict.reached).toMatchObject({
      per: 'team',
      resetsAt: NOW - 10 * 3_600_000 + DAY,
    });
  });

  it('refuses by default, with a sentence naming the limit and the reset time', () => {
    const rule = { ...builtInPolicy().forTool('create_note').rule, limits: [check(2).limit] };
    const reached = { ...check(2).limit, count: 2, resetsAt: NOW + 3_600_000 };
    const outcome = limitOutcome('create_note', rule, { over: true, reached });
    expect(outcome).toMatchObject({ kind: 'refused', rule: { limitReached: reached } });
    expect(limitOutput('create_note', reached)).toBe(
      'Tool execution was not offered for approval: the limit on create_note of 2 requests per requester in 24h was reached (2 offered); it resets at 2025-03-01 13:00 UTC. Do not retry this call before then.',
    );
    expect(limitOutcome('create_note', rule, { over: false })).toEqual({ kind: 'within' });
  });

  it('overLimit "admins" replaces the approvers by admins, with no standing approval or escalation', () => {
    const rule = {
      ...builtInPolicy().forTool('create_note').rule,
      escalateAfterMs: 60_000,
      escalateTo: ['U0BOSS'],
      overLimit: 'admins' as const,
    };
    const reached = { ...check(1).limit, count: 1, resetsAt: NOW };
    const outcome = limitOutcome('create_note', rule, { over: true, reached });
    if (outcome.kind !== 'admins') throw new Error('expected admins');
    expect(outcome.rule).toMatchObject({ approvers: ['admins'], allowStandingApproval: false });
    expect(outcome.rule).not.toHaveProperty('escalateTo');
    expect(limitNote('create_note', reached, true)).toContain('was sent to admins only');
  });
});

describe('approval limits: the policy file', () => {
  const parse = (json: unknown) => parsePolicyText(JSON.stringify(json), 'policy.json', toolNames());

  it('reads limits and overLimit per tool and per rule', () => {
    const loaded = parse({
      defaults: { limits: [{ per: 'team', max: 100, window: '1d' }] },
      tools: {
        create_note: {
          limits: [{ per: 'requester', max: 20, window: '1d' }],
          overLimit: 'admins',
          rules: [{ when: "args.text == 'x'", limits: [{ per: 'channel', max: 2, window: '1h' }] }],
        },
      },
    });
    if (!loaded.ok) throw new Error(loaded.problems.join('\n'));
    const { policy } = loaded;
    expect(policy.forTool('create_note').rule).toMatchObject({
      limits: [{ per: 'requester', max: 20, windowMs: DAY }],
      overLimit: 'admins',
    });
    expect(policy.forTool('delete_note').rule.limits).toEqual([{ per: 'team', max: 100, windowMs: DAY }]);
    const ruled = policy.forCall({
      tool: 'create_note',
      args: { text: 'x' },
      requester: 'U1',
      channel: 'C1',
      team: 'T1',
      agent: 'main',
    });
    expect(ruled.rule).toMatchObject({
      limits: [{ per: 'channel', max: 2, windowMs: 3_600_000 }],
      overLimit: 'admins',
    });
    const plain = parse({ tools: { create_note: { quorum: 1 } } });
    if (!plain.ok) throw new Error('expected a policy');
    expect(plain.policy.forTool('create_note').rule).not.toHaveProperty('limits');
  });

  it('names each invalid field with its place and the fix', () => {
    const loaded = parse({
      tools: {
        create_note: {
          limits: [{ per: 'user', max: 0, window: 'forever', extra: 1 }],
          overLimit: 'nobody',
        },
        delete_note: { limits: [] },
      },
    });
    if (loaded.ok) throw new Error('expected problems');
    const text = loaded.problems.join('\n');
    expect(text).toContain('tools.create_note.limits[0].per');
    expect(text).toContain('is not one of requester, channel, team');
    expect(text).toContain('tools.create_note.limits[0].max');
    expect(text).toContain('"forever" is not a duration');
    expect(text).toContain('extra');
    expect(text).toContain('tools.create_note.overLimit');
    expect(text).toContain('is not one of refuse, admins');
    expect(text).toContain('tools.delete_note.limits');
  });
});

describe('docs/policy.md: limits', () => {
  it('the example of the Limits section is a valid policy with its limits', () => {
    const page = readFileSync(new URL('../../docs/policy.md', import.meta.url), 'utf8');
    const example = /```json\n([\s\S]*?)```/.exec(page.slice(page.indexOf('### Limits')))?.[1];
    if (!example) throw new Error('no example');
    const result = parsePolicyText(example, './policy.json', toolNames());
    if (!result.ok) throw new Error(result.problems.join('\n'));
    expect(result.policy.forTool('post_message').rule.limits).toHaveLength(2);
    const general = result.policy.forCall({
      tool: 'post_message',
      args: { channel: 'C0GENERAL', text: 'hi' },
      requester: 'U1',
      channel: 'C1',
      team: 'T1',
      agent: 'main',
    });
    expect(general.rule).toMatchObject({ limits: [{ per: 'team', max: 2 }], overLimit: 'admins' });
  });
});
