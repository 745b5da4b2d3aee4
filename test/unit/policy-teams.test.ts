import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ApprovalPolicy } from '../../src/approvals/policy.js';
import { parsePolicyText } from '../../src/approvals/policy-file.js';
import type { CallFacts } from '../../src/approvals/policy-rules.js';
import { policyTable } from '../../src/approvals/policy-summary.js';
import { toolNames } from '../../src/tools/built-in-tools.js';

const KNOWN = toolNames();
const parse = (json: unknown) => parsePolicyText(JSON.stringify(json), 'policy.json', KNOWN);
const valid = (json: unknown): ApprovalPolicy => {
  const result = parse(json);
  if (!result.ok) throw new Error(result.problems.join('\n'));
  return result.policy;
};
const problems = (json: unknown) => {
  const result = parse(json);
  if (result.ok) throw new Error('expected problems');
  return result.problems;
};
const call = (tool: string, team: string, args: unknown = {}): CallFacts => ({
  args,
  tool,
  team,
  requester: 'U1',
  channel: 'C1',
  agent: 'main',
});

/** The file's own rules, and two workspaces that change some of them. */
const FILE = {
  defaults: { expiresAfter: '24h' },
  tools: {
    delete_note: { approvers: ['admins'], quorum: 1, expiresAfter: '7d' },
    post_message: { rules: [{ when: "args.channel == 'C0SANDBOX'", requireApproval: false }] },
  },
  teams: {
    T0SALES: {
      defaults: { expiresAfter: '1h', remindAfter: '30m' },
      tools: {
        create_note: { requireApproval: false },
        delete_note: { approvers: ['U0LEAD', 'admins'], quorum: 2 },
      },
    },
    T0OPS: {
      tools: { post_message: { rules: [{ when: "args.channel == 'C0OPS'", approvers: ['U0ONCALL'] }] } },
    },
  },
};

describe('policy per workspace (teams)', () => {
  it("a workspace's section is laid over the file's own rules for its requests only", () => {
    const policy = valid(FILE);
    expect(policy.forCall(call('create_note', 'T0SALES')).requireApproval).toBe(false);
    expect(policy.forCall(call('create_note', 'T0OTHER')).requireApproval).toBe(true);
    expect(policy.forTool('create_note', 'T0SALES').requireApproval).toBe(false);
    expect(policy.forTool('create_note').requireApproval).toBe(true);
    // Field by field: the workspace's approvers and quorum, the file's own expiry of delete_note (a tool's
    // entry wins over any defaults, the workspace's 1h included), the workspace's reminder.
    expect(policy.forCall(call('delete_note', 'T0SALES')).rule).toMatchObject({
      approvers: ['U0LEAD', 'admins'],
      quorum: 2,
      expiresAfterMs: 7 * 86_400_000,
      remindAfterMs: 1_800_000,
      allowSelfApproval: false,
    });
    expect(policy.forCall(call('delete_note', 'T0OPS')).rule).toMatchObject({
      approvers: ['admins'],
      quorum: 1,
      expiresAfterMs: 7 * 86_400_000,
      remindAfterMs: null,
    });
    // A tool no level names gets the workspace's defaults.
    expect(policy.forCall(call('github__create_issue', 'T0SALES')).rule.expiresAfterMs).toBe(3_600_000);
    expect(policy.forCall(call('github__create_issue', 'T0OPS')).rule.expiresAfterMs).toBe(86_400_000);
  });

  it("a workspace's conditional rules replace the file's; the file's still apply over the workspace's fields", () => {
    const policy = valid(FILE);
    const ops = policy.forCall(call('post_message', 'T0OPS', { channel: 'C0OPS' }));
    expect(ops.rule).toMatchObject({
      approvers: ['U0ONCALL'],
      appliedRule: { place: 'teams.T0OPS.tools.post_message.rules[0]' },
    });
    // The file's sandbox rule is not T0OPS's any more.
    expect(policy.forCall(call('post_message', 'T0OPS', { channel: 'C0SANDBOX' })).requireApproval).toBe(
      true,
    );
    const sales = policy.forCall(call('post_message', 'T0SALES', { channel: 'C0SANDBOX' }));
    expect(sales).toMatchObject({
      requireApproval: false,
      rule: { expiresAfterMs: 3_600_000, appliedRule: { place: 'tools.post_message.rules[0]' } },
    });
  });

  it("the summary names each workspace's differences; the table and the approvers follow the workspace", () => {
    const policy = valid(FILE);
    const [own, ops, sales, ...rest] = policy.summary.split('\n');
    expect(rest).toEqual([]);
    expect(own).toMatch(/^Approval policy \(policy\.json\): create_note: conversation or admins, expires/);
    expect(ops).toBe(
      "Team T0OPS: post_message: admins, no self-approval, no standing approval, expires after 24h (rules[0] when args.channel == 'C0OPS': U0ONCALL, no self-approval, no standing approval, expires after 24h)",
    );
    expect(sales).toMatch(
      /^Team T0SALES: create_note: no approval; delete_note: U0LEAD or admins, 2 approvals, /,
    );
    expect(sales).toContain('; other tools: when the tool asks, conversation or admins, expires after 1h');
    expect(sales).not.toContain(
      'post_message: admins, no self-approval, no standing approval, expires after 24h',
    );
    expect(valid({ teams: { T0SAME: {} } }).summary.split('\n')[1]).toBe(
      "Team T0SAME: the file's own rules, unchanged",
    );
    expect(policy.describe('T0SALES').team).toBe('T0SALES');
    expect(policy.describe('T0OTHER').team).toBeUndefined();
    const createNote = (team?: string) =>
      policyTable(policy.describe(team)).find((r) => r.tool === 'create_note');
    expect(createNote('T0SALES')?.approval).toBe('not required');
    expect(createNote()?.approval).toBe('required');
    expect(policy.namedApprovers('T0OPS')).toContain('U0ONCALL');
    expect(policy.namedApprovers('T0SALES')).not.toContain('U0ONCALL');
    expect(policy.namedApprovers()).toEqual(expect.arrayContaining(['U0ONCALL', 'U0LEAD']));
  });

  it('every problem of every section is listed at once, with its place', () => {
    const found = problems({
      tools: { create_note: { quorum: 0 } },
      teams: {
        T0123: {
          defaults: { remindAfter: 'soon' },
          tools: {
            delete_note: { quorum: 0 },
            delete_notes: {},
            post_message: { approvers: ['U0ONE'], quorum: 3, rules: [{ when: 'user == 1' }] },
          },
          admins: ['U1'],
        },
        E0ORG: {},
        general: {},
        T0456: 'strict',
      },
    });
    expect(found).toEqual(
      expect.arrayContaining([
        'policy.json: tools.create_note.quorum: must be at least 1; use a whole number of at least 1 (how many different people must approve)',
        'policy.json: teams.T0123.tools.delete_note.quorum: must be at least 1; use a whole number of at least 1 (how many different people must approve)',
        expect.stringMatching(
          /^policy\.json: teams\.T0123\.defaults\.remindAfter: "soon" is not a duration; /,
        ),
        'policy.json: teams.T0123.tools.delete_notes: unknown tool "delete_notes"; use one of get_current_time, list_notes, create_note, delete_note, post_message, or SERVER__TOOL for an MCP tool',
        'policy.json: teams.T0123.tools.post_message: quorum 3 cannot be reached by 1 listed approver(s); lower quorum or add approvers',
        expect.stringMatching(
          /^policy\.json: teams\.T0123\.tools\.post_message\.rules\[0\]\.when: Unknown variable: user; /,
        ),
        'policy.json: teams.T0123: unknown field "admins"; a team\'s section may have "defaults" and "tools"',
        expect.stringMatching(
          /^policy\.json: teams\.E0ORG: "E0ORG" is an Enterprise Grid organisation ID; name each workspace by its team ID/,
        ),
        'policy.json: teams.general: "general" is not a Slack team ID; use the workspace\'s ID, such as T0123ABCD',
        'policy.json: teams.T0456: Invalid input: expected object, received string; use an object with "defaults" and "tools", as the file itself has',
        'policy.json: teams.T0123.tools.post_message.rules[0]: quorum 3 cannot be reached by 1 listed approver(s); lower quorum or add approvers',
      ]),
    );
    expect(found).toHaveLength(11);
  });

  it("a problem of the file's own rules is told once, not again for every workspace", () => {
    expect(
      problems({
        defaults: { approvers: ['requester'], allowSelfApproval: false },
        tools: { delete_note: { approvers: ['admins'] }, post_message: { approvers: ['admins'] } },
        teams: { T01: { defaults: { expiresAfter: '1h' } }, T02: {} },
      }),
    ).toEqual([
      'policy.json: defaults: nobody can decide: the only approver is the requester and allowSelfApproval is false; add approvers or allow self-approval',
    ]);
    // A workspace that makes a rule nobody can satisfy is told at its own place.
    expect(
      problems({ teams: { T01: { defaults: { approvers: ['requester'], allowSelfApproval: false } } } }),
    ).toEqual(
      expect.arrayContaining([
        'policy.json: teams.T01.defaults: nobody can decide: the only approver is the requester and allowSelfApproval is false; add approvers or allow self-approval',
      ]),
    );
  });

  it("docs/policy.md's example is valid and the lines it shows are those the check prints", () => {
    const page = readFileSync(new URL('../../docs/policy.md', import.meta.url), 'utf8');
    const section = page.slice(page.indexOf('### Per workspace'));
    const example = /```json\n([\s\S]*?)```/.exec(section)?.[1];
    const shown = /```text\n([\s\S]*?)```/.exec(section)?.[1];
    if (!example || !shown) throw new Error('no example in the Per workspace section of docs/policy.md');
    const result = parsePolicyText(example, './policy.json', KNOWN);
    if (!result.ok) throw new Error(result.problems.join('\n'));
    const lines = result.policy.summary.split('\n');
    const [first, ...teams] = shown
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean);
    expect(lines[0]?.startsWith(first?.replace(/ …$/, '') ?? '?')).toBe(true);
    expect(lines.slice(1)).toEqual(teams);
  });
});
