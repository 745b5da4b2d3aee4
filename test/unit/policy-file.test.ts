import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../src/agent/tool.js';
import { BUILT_IN_TOOL_POLICIES } from '../../src/approvals/policy.js';
import { loadApprovalPolicy, parsePolicyText } from '../../src/approvals/policy-file.js';
import { parseDuration } from '../../src/approvals/policy-file-schema.js';
import {
  BUILT_IN_TOOLS,
  createBuiltInTools,
  createTools,
  toolNames,
} from '../../src/tools/built-in-tools.js';

const KNOWN = toolNames();
const parse = (json: unknown) => parsePolicyText(JSON.stringify(json), 'policy.json', KNOWN);
const problems = (json: unknown) => {
  const result = parse(json);
  if (result.ok) throw new Error('expected problems');
  return result.problems;
};

describe('policy file', () => {
  it('without a file the built-in defaults apply and the summary says so', () => {
    const loaded = loadApprovalPolicy(undefined, KNOWN);
    if (!loaded.ok) throw new Error(loaded.problems.join());
    const { policy } = loaded;
    expect(policy.forTool('list_notes').requireApproval).toBe(false);
    expect(policy.forTool('create_note').rule).toMatchObject({ allowSelfApproval: true, quorum: 1 });
    expect(policy.forTool('delete_note').rule).toMatchObject({
      approvers: ['admins'],
      allowSelfApproval: false,
      allowStandingApproval: false,
    });
    expect(policy.summary).toMatch(
      /^Approval policy \(built-in defaults\): create_note: conversation or admins; /,
    );
    expect(policy.summary).not.toContain('\n');
  });

  const deps = {
    clock: { now: () => 0 },
    notes: { list: async () => [], create: async () => ({ id: 1, text: '' }), delete: async () => false },
    poster: { post: async () => ({ kind: 'posted' as const }), postText: async () => {} },
  };

  it('the tools the runner gets and the names the policy file may use come from one list', () => {
    expect(createBuiltInTools(deps).map((t) => t.name)).toEqual(KNOWN);
    // Default approvers exist only for tools that exist.
    for (const name of Object.keys(BUILT_IN_TOOL_POLICIES)) expect(KNOWN).toContain(name);
  });

  it('a tool added as docs/architecture.md shows ("Adding a tool") can be named in a policy file', () => {
    const catalog = {
      ...BUILT_IN_TOOLS,
      lookup_customer: () =>
        defineTool({
          name: 'lookup_customer',
          description: 'Fetches a customer profile by id.',
          parameters: z.object({ id: z.number().int().positive() }),
          needsApproval: (args) => args.id > 1000,
          execute: async ({ id }) => JSON.stringify({ id }),
        }),
    };
    expect(createTools(catalog, deps).map((t) => t.name)).toContain('lookup_customer');
    const rules = JSON.stringify({ tools: { lookup_customer: { approvers: ['admins'] } } });
    const loaded = parsePolicyText(rules, 'policy.json', toolNames(catalog));
    if (!loaded.ok) throw new Error(loaded.problems.join('\n'));
    expect(loaded.policy.forTool('lookup_customer').rule.approvers).toEqual(['admins']);
    // Without a rule of its own it gets the base rule, its own needsApproval deciding whether to ask.
    expect(loaded.policy.forTool('get_current_time').requireApproval).toBe(false);
  });

  it('a catalog entry whose tool has another name is refused', () => {
    const catalog = { renamed: BUILT_IN_TOOLS.list_notes ?? (() => undefined as never) };
    expect(() => createTools(catalog, deps)).toThrow('Tool "list_notes" is listed as "renamed"');
  });

  it('reads every rule field, lays defaults then tool rules over the built-in entries, accepts MCP tools', () => {
    const result = parse({
      defaults: { expiresAfter: '24h', remindAfter: '4h' },
      tools: {
        delete_note: { approvers: ['admins', 'S012AB3CD'], quorum: 2, approvalChannel: 'C0APPROVALS' },
        create_note: {
          requireApproval: true,
          approvers: ['conversation'],
          allowStandingApproval: false,
          standingApprovalExpiresAfter: '30m',
        },
        get_current_time: { requireApproval: true, allowSelfApproval: true, approvers: ['U012ABCDEF'] },
        github__create_issue: { approvers: ['requester', 'W0123ABC'], expiresAfter: null },
      },
    });
    if (!result.ok) throw new Error(result.problems.join('\n'));
    const { policy } = result;
    expect(policy.forTool('delete_note')).toEqual({
      requireApproval: true,
      rule: {
        approvers: ['admins', 'S012AB3CD'],
        allowSelfApproval: false,
        quorum: 2,
        allowStandingApproval: false,
        expiresAfterMs: 86_400_000,
        remindAfterMs: 14_400_000,
        approvalChannel: 'C0APPROVALS',
        standingExpiresAfterMs: 86_400_000,
      },
    });
    expect(policy.forTool('create_note').rule).toMatchObject({
      approvers: ['conversation'],
      allowSelfApproval: true,
      allowStandingApproval: false,
      expiresAfterMs: 86_400_000,
      standingExpiresAfterMs: 1_800_000,
    });
    expect(policy.forTool('get_current_time')).toMatchObject({ requireApproval: true });
    expect(policy.forTool('github__create_issue')).toMatchObject({
      requireApproval: undefined,
      rule: { approvers: ['requester', 'W0123ABC'], expiresAfterMs: null, remindAfterMs: 14_400_000 },
    });
    // A tool the file does not name (an MCP tool added later) gets the file's defaults.
    expect(policy.forTool('other__tool').rule.expiresAfterMs).toBe(86_400_000);
    expect(policy.forTool('list_notes').requireApproval).toBe(false);
    expect(policy.summary).toContain('Approval policy (policy.json): ');
    expect(policy.summary).toContain(
      'delete_note: admins or S012AB3CD, 2 approvals, no self-approval, no standing approval, expires after 24h, reminder every 4h, also in C0APPROVALS',
    );
  });

  it('durations: "30m", "24h", "7d"; anything else is refused', () => {
    expect(parseDuration('30m')).toBe(1_800_000);
    expect(parseDuration('24h')).toBe(86_400_000);
    expect(parseDuration('7d')).toBe(604_800_000);
    for (const bad of ['0h', '1.5h', '24', 'h', '1 day', '-1h', ''])
      expect(parseDuration(bad)).toBeUndefined();
    expect(problems({ tools: { create_note: { expiresAfter: '1 day' } } })).toEqual([
      'policy.json: tools.create_note.expiresAfter: "1 day" is not a duration; use a duration such as "30m", "24h" or "7d", or null for never',
    ]);
  });

  it('an unknown tool name is an error naming the file, the path and the known tools', () => {
    expect(problems({ tools: { delete_notes: {} } })).toEqual([
      'policy.json: tools.delete_notes: unknown tool "delete_notes"; use one of get_current_time, list_notes, create_note, delete_note, post_message, or SERVER__TOOL for an MCP tool',
    ]);
  });

  it('malformed Slack IDs, quorum below 1 and unknown fields are errors with their fix', () => {
    const found = problems({
      defaults: { quorom: 2 },
      tools: {
        delete_note: { approvers: ['admins', 'u123', 'S1'], quorum: 0 },
        post_message: { approvalChannel: '#general', allowSelfApproval: 'no' },
      },
    });
    expect(found).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^policy\.json: defaults: unknown field "quorom"; a rule may set requireApproval, /,
        ),
        expect.stringMatching(
          /^policy\.json: tools\.delete_note\.approvers\[1\]: "u123" is not an approver; use /,
        ),
        expect.stringMatching(/^policy\.json: tools\.delete_note\.approvers\[2\]: "S1" is not an approver; /),
        'policy.json: tools.delete_note.quorum: must be at least 1; use a whole number of at least 1 (how many different people must approve)',
        expect.stringMatching(
          /^policy\.json: tools\.post_message\.approvalChannel: is not a Slack channel ID; /,
        ),
        expect.stringMatching(
          /^policy\.json: tools\.post_message\.allowSelfApproval: .*; use true or false$/,
        ),
      ]),
    );
    expect(found).toHaveLength(6);
  });

  it('rules nobody can satisfy are errors', () => {
    expect(
      problems({ tools: { create_note: { approvers: ['requester'], allowSelfApproval: false } } }),
    ).toEqual([expect.stringMatching(/^policy\.json: tools\.create_note: nobody can decide/)]);
    expect(problems({ tools: { create_note: { approvers: ['U0AAA', 'U0BBB'], quorum: 3 } } })).toEqual([
      'policy.json: tools.create_note: quorum 3 cannot be reached by 2 listed approver(s); lower quorum or add approvers',
    ]);
  });

  it('every problem is listed at once: rules nobody can satisfy beside other mistakes', () => {
    expect(
      problems({
        defaults: { expiresAfter: 'soon' },
        tools: {
          delete_notes: {},
          create_note: { approvers: ['U0AAA', 'U0BBB'], quorum: 3, remindAfter: 'later' },
          delete_note: { approvers: ['requester'] },
          post_message: { approvalChannel: '#general', quorum: 2, approvers: ['U0AAA'] },
        },
      }),
    ).toEqual([
      expect.stringMatching(/^policy\.json: tools\.delete_notes: unknown tool "delete_notes"/),
      expect.stringMatching(/^policy\.json: defaults\.expiresAfter: "soon" is not a duration/),
      expect.stringMatching(/^policy\.json: tools\.create_note\.remindAfter: "later" is not a duration/),
      expect.stringMatching(/^policy\.json: tools\.post_message\.approvalChannel: is not a Slack channel ID/),
      'policy.json: tools.create_note: quorum 3 cannot be reached by 2 listed approver(s); lower quorum or add approvers',
      expect.stringMatching(/^policy\.json: tools\.delete_note: nobody can decide/),
      'policy.json: tools.post_message: quorum 2 cannot be reached by 1 listed approver(s); lower quorum or add approvers',
    ]);
  });

  it('a file that is not JSON, or cannot be read, is an error naming it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'policy-'));
    const file = join(dir, 'policy.json');
    writeFileSync(file, '{ "tools": { "create_note": { "quorum": 2, } } }');
    const broken = loadApprovalPolicy(file, KNOWN);
    expect(broken.ok ? [] : broken.problems).toEqual([
      expect.stringMatching(new RegExp(`^${file}: not valid JSON \\(.+\\); fix the syntax$`)),
    ]);
    const missing = loadApprovalPolicy(join(dir, 'nope.json'), KNOWN);
    expect(missing.ok ? [] : missing.problems).toEqual([
      `${join(dir, 'nope.json')}: cannot read the file (ENOENT); check APPROVAL_POLICY_FILE or unset it`,
    ]);
    expect(problems([1])).toEqual([
      expect.stringMatching(/^policy\.json: \(top level\): .*; use an object with "defaults" and "tools"$/),
    ]);
  });
});

describe('docs/policy.md', () => {
  it('the example policy file in the docs is valid', () => {
    const page = readFileSync(new URL('../../docs/policy.md', import.meta.url), 'utf8');
    const section = page.slice(page.indexOf('## The policy file'));
    const example = /```json\n([\s\S]*?)```/.exec(section)?.[1];
    if (!example) throw new Error('no example in docs/policy.md');
    const result = parsePolicyText(example, './policy.json', KNOWN);
    if (!result.ok) throw new Error(result.problems.join('\n'));
    expect(result.policy.forTool('delete_note').rule).toMatchObject({
      quorum: 2,
      approvalChannel: 'C0123APPROVALS',
    });
    expect(result.policy.summary).toContain(
      'Approval policy (./policy.json): create_note: conversation, expires after 24h, reminder every 4h; delete_note: admins or S012AB3CD, 2 approvals, no self-approval, no standing approval, expires after 7d, reminder every 4h, also in C0123APPROVALS;',
    );
  });
});
