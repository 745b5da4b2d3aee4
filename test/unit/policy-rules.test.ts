import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BUILT_IN_TOOL_POLICIES } from '../../src/approvals/policy.js';
import { parsePolicyText } from '../../src/approvals/policy-file.js';
import { compileWhen } from '../../src/approvals/policy-rules.js';

const KNOWN = Object.keys(BUILT_IN_TOOL_POLICIES);
const parse = (json: unknown) => parsePolicyText(JSON.stringify(json), 'policy.json', KNOWN);
const policyOf = (json: unknown) => {
  const result = parse(json);
  if (!result.ok) throw new Error(result.problems.join('\n'));
  return result.policy;
};
const problems = (json: unknown) => {
  const result = parse(json);
  if (result.ok) throw new Error('expected problems');
  return result.problems;
};

const ISSUE_EXAMPLE = {
  tools: {
    post_message: {
      approvers: ['admins'],
      rules: [
        { when: "args.channel == 'C0SANDBOX'", requireApproval: false },
        { when: 'size(args.text) > 1000', quorum: 2 },
      ],
    },
  },
};

const call = (
  args: unknown,
  more: Partial<{ requester: string; channel: string; team: string; agent: string }> = {},
) => ({
  args,
  tool: 'post_message',
  requester: 'U1',
  channel: 'C1',
  team: 'T1',
  agent: 'main',
  ...more,
});

describe('conditional policy rules', () => {
  it('the first rule whose when is true is laid over the tool; none true gives the tool its own fields', () => {
    const policy = policyOf(ISSUE_EXAMPLE);
    const sandbox = policy.forCall(call({ channel: 'C0SANDBOX', text: 'x'.repeat(2000) }));
    // Both rules match; the first one wins.
    expect(sandbox.requireApproval).toBe(false);
    expect(sandbox.rule.appliedRule).toEqual({
      place: 'tools.post_message.rules[0]',
      when: "args.channel == 'C0SANDBOX'",
    });
    const long = policy.forCall(call({ channel: 'C0GENERAL', text: 'x'.repeat(1001) }));
    expect(long).toEqual({
      requireApproval: true,
      rule: {
        ...policy.forTool('post_message').rule,
        quorum: 2,
        appliedRule: { place: 'tools.post_message.rules[1]', when: 'size(args.text) > 1000' },
      },
    });
    const short = policy.forCall(call({ channel: 'C0GENERAL', text: 'hello' }));
    expect(short).toEqual(policy.forTool('post_message'));
    expect(short.rule.appliedRule).toBeUndefined();
  });

  it('a when that fails at evaluation fails closed: its rule applies and approval is required', () => {
    const policy = policyOf(ISSUE_EXAMPLE);
    // No channel argument: the first rule cannot be evaluated, so it applies, with approval required even
    // though it waives approval when true.
    const missing = policy.forCall(call({ text: 'hi' }));
    expect(missing.requireApproval).toBe(true);
    expect(missing.rule.appliedRule).toEqual({
      place: 'tools.post_message.rules[0]',
      when: "args.channel == 'C0SANDBOX'",
      error: 'No such key: channel',
    });
    // A value that is not true or false fails closed too.
    const flag = policyOf({
      tools: { create_note: { rules: [{ when: 'args.flag', requireApproval: false }] } },
    });
    const odd = flag.forCall({ ...call({ flag: 'yes' }), tool: 'create_note' });
    expect(odd.requireApproval).toBe(true);
    expect(odd.rule.appliedRule?.error).toBe('gave a string, not true or false');
    expect(flag.forCall({ ...call({ flag: true }), tool: 'create_note' }).requireApproval).toBe(false);
  });

  it('rules read tool, requester, channel and team, and keep every rule field with layering', () => {
    const policy = policyOf({
      defaults: { expiresAfter: '24h' },
      tools: {
        create_note: {
          approvers: ['conversation'],
          rules: [
            { when: "requester == 'U0INTERN' && team == 'T1'", approvers: ['U0MENTOR'], expiresAfter: '1h' },
            { when: "channel.startsWith('D') || tool != 'create_note'", requireApproval: false },
          ],
        },
      },
    });
    const intern = policy.forCall({ ...call({ text: 'a' }, { requester: 'U0INTERN' }), tool: 'create_note' });
    expect(intern.rule).toMatchObject({
      approvers: ['U0MENTOR'],
      expiresAfterMs: 3_600_000,
      allowSelfApproval: true,
      appliedRule: { place: 'tools.create_note.rules[0]' },
    });
    const dm = policy.forCall({ ...call({ text: 'a' }, { channel: 'D123' }), tool: 'create_note' });
    expect(dm.requireApproval).toBe(false);
    const other = policy.forCall({ ...call({ text: 'a' }, { team: 'T2' }), tool: 'create_note' });
    expect(other.rule).toMatchObject({ approvers: ['conversation'], expiresAfterMs: 86_400_000 });
    expect(other.rule.appliedRule).toBeUndefined();
    // A tool without rules: forCall is forTool.
    expect(policy.forCall({ ...call({ id: 1 }), tool: 'delete_note' })).toEqual(
      policy.forTool('delete_note'),
    );
  });

  it("rules read the agent making the call: 'main' for the bot's own, the innermost agent of a nested call", () => {
    const policy = policyOf({
      tools: { create_note: { rules: [{ when: "agent == 'triage'", approvers: ['U0TRIAGER'] }] } },
    });
    const nested = policy.forCall({ ...call({ text: 'a' }, { agent: 'triage' }), tool: 'create_note' });
    expect(nested.rule).toMatchObject({
      approvers: ['U0TRIAGER'],
      appliedRule: { place: 'tools.create_note.rules[0]', when: "agent == 'triage'" },
    });
    const own = policy.forCall({ ...call({ text: 'a' }), tool: 'create_note' });
    expect(own.rule.appliedRule).toBeUndefined();
  });

  it('an expression that does not compile, names an unknown variable or is not true/false is a problem with its place', () => {
    const found = problems({
      tools: {
        post_message: {
          rules: [
            { when: "args.channel == 'C0SANDBOX'", requireApproval: false },
            { when: 'size(args.text) >', quorum: 2 },
            { when: "user == 'U1'" },
            { when: '1 + 2' },
          ],
        },
      },
    });
    expect(found).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^policy\.json: tools\.post_message\.rules\[1\]\.when: Unexpected token: EOF; write a CEL expression over args, tool, requester, channel, team and agent/,
        ),
        expect.stringMatching(
          /^policy\.json: tools\.post_message\.rules\[2\]\.when: Unknown variable: user; /,
        ),
        expect.stringMatching(
          /^policy\.json: tools\.post_message\.rules\[3\]\.when: gives a int, not true or false; /,
        ),
      ]),
    );
    expect(found).toHaveLength(3);
    // Shape problems (unknown field, missing when) are reported before expressions are compiled.
    const shape = problems({
      tools: { create_note: { rules: [{ when: 'true', colour: 'red' }, { requireApproval: false }] } },
    });
    expect(shape).toEqual([
      expect.stringMatching(/^policy\.json: tools\.create_note\.rules\[0\]: unknown field "colour"; /),
      expect.stringMatching(/^policy\.json: tools\.create_note\.rules\[1\]\.when: .*; use a CEL expression/),
    ]);
  });

  it('a rule nobody could satisfy is a problem with its place', () => {
    expect(
      problems({
        tools: { create_note: { rules: [{ when: 'true', approvers: ['U0AAA'], quorum: 2 }] } },
      }),
    ).toEqual([
      'policy.json: tools.create_note.rules[0]: quorum 2 cannot be reached by 1 listed approver(s); lower quorum or add approvers',
    ]);
  });

  it('the summary lists each rule with what it makes of the tool', () => {
    expect(policyOf(ISSUE_EXAMPLE).summary).toContain(
      "post_message: admins, no self-approval, no standing approval (rules[0] when args.channel == 'C0SANDBOX': no approval) (rules[1] when size(args.text) > 1000: admins, 2 approvals, no self-approval, no standing approval);",
    );
  });

  it('compileWhen accepts true/false and dynamic values, refuses other types', () => {
    expect(compileWhen('args.count > 2 && args.dry_run').ok).toBe(true);
    expect(compileWhen("'x'")).toEqual({ ok: false, message: 'gives a string, not true or false' });
  });
});

describe('notify', () => {
  it('notify is validated like every field', () => {
    const result = parsePolicyText(
      JSON.stringify({ defaults: { notify: ['email'] }, tools: { create_note: { notify: [] } } }),
      'policy.json',
      ['create_note'],
    );
    expect(result.ok ? [] : result.problems).toEqual([
      expect.stringMatching(
        /^policy\.json: defaults\.notify\[0\]: is not a place to announce requests; use a list of "thread"/,
      ),
      'policy.json: tools.create_note.notify: the list is empty; use a list of "thread" (the card in the conversation) and "dm" (a copy to each person who may decide)',
    ]);
  });
});

describe('notify: only by direct message needs someone to send it to', () => {
  it('is a problem when the approvers name nobody', () => {
    expect(problems({ tools: { create_note: { approvers: ['conversation'], notify: ['dm'] } } })).toEqual([
      'policy.json: tools.create_note: notify is only "dm" but the approvers name nobody to send it to; add "thread" to notify or name admins, users or user groups',
    ]);
    expect(
      parse({ tools: { create_note: { approvers: ['conversation'], notify: ['thread', 'dm'] } } }).ok,
    ).toBe(true);
  });
});

describe('escalation fields', () => {
  it('are laid over like every field, summarised, and escalateAfter needs escalateTo', () => {
    const policy = policyOf({
      defaults: { escalateAfter: '2h', escalateTo: ['S0ONCALL'] },
      tools: { create_note: { escalateTo: ['admins', 'U0LEAD'] }, delete_note: { escalateAfter: null } },
    });
    expect(policy.forTool('create_note').rule).toMatchObject({
      escalateAfterMs: 7_200_000,
      escalateTo: ['admins', 'U0LEAD'],
    });
    expect(policy.forTool('delete_note').rule.escalateAfterMs).toBeNull();
    expect(policy.summary).toContain(
      'create_note: conversation or admins, escalated to admins or U0LEAD after 2h;',
    );
    expect(problems({ tools: { create_note: { escalateAfter: '2h' } } })).toEqual([
      'policy.json: tools.create_note: escalateAfter is set but escalateTo is not; add escalateTo (users, user groups or "admins") or set escalateAfter to null',
    ]);
    expect(problems({ tools: { create_note: { escalateAfter: 'soon', escalateTo: ['oncall'] } } })).toEqual([
      expect.stringMatching(/^policy\.json: tools\.create_note\.escalateAfter: "soon" is not a duration; /),
      expect.stringMatching(
        /^policy\.json: tools\.create_note\.escalateTo\[0\]: "oncall" is not an approver; use a list of "admins"/,
      ),
    ]);
  });
});

describe('the shape of the policy file with routing', () => {
  it('reads the full example: rules, notify, escalateAfter and escalateTo, with defaults under them', () => {
    const policy = policyOf({
      defaults: { notify: ['thread'], escalateAfter: null },
      tools: {
        post_message: {
          approvers: ['admins'],
          rules: [
            { when: "args.channel == 'C0SANDBOX'", requireApproval: false },
            { when: 'size(args.text) > 1000', quorum: 2 },
          ],
          notify: ['thread', 'dm'],
          escalateAfter: '2h',
          escalateTo: ['S0ONCALL'],
        },
      },
    });
    expect(policy.forTool('create_note').rule).toMatchObject({ notify: ['thread'], escalateAfterMs: null });
    const long = policy.forCall(call({ channel: 'C0NEWS', text: 'x'.repeat(1001) }));
    expect(long.rule).toMatchObject({
      approvers: ['admins'],
      quorum: 2,
      notify: ['thread', 'dm'],
      escalateAfterMs: 7_200_000,
      escalateTo: ['S0ONCALL'],
    });
    expect(policy.namedApprovers()).toEqual(expect.arrayContaining(['admins', 'S0ONCALL']));
  });
});

describe('docs/policy.md', () => {
  it('the routing example is valid', () => {
    const page = readFileSync(new URL('../../docs/policy.md', import.meta.url), 'utf8');
    const example = /```json\n([\s\S]*?)```/.exec(page.slice(page.indexOf('A policy that routes')))?.[1];
    if (!example) throw new Error('no routing example in docs/policy.md');
    const result = parsePolicyText(example, './policy.json', KNOWN);
    if (!result.ok) throw new Error(result.problems.join('\n'));
    expect(result.policy.forTool('post_message').rule).toMatchObject({ escalateTo: ['S0ONCALL'] });
  });

  it('the example of rules that depend on the call is valid and behaves as described', () => {
    const page = readFileSync(new URL('../../docs/policy.md', import.meta.url), 'utf8');
    const section = page.slice(page.indexOf('### Rules that depend on the call'));
    const example = /```json\n([\s\S]*?)```/.exec(section)?.[1];
    if (!example) throw new Error('no rules example in docs/policy.md');
    const result = parsePolicyText(example, './policy.json', KNOWN);
    if (!result.ok) throw new Error(result.problems.join('\n'));
    const intern = result.policy.forCall(call({ channel: 'C2', text: 'hi' }, { requester: 'U0INTERN' }));
    expect(intern.rule).toMatchObject({ approvers: ['U0MENTOR'], expiresAfterMs: 3_600_000 });
    expect(result.policy.forCall(call({ channel: 'C0SANDBOX', text: 'hi' })).requireApproval).toBe(false);
  });
});
