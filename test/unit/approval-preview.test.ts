import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { previewCall } from '../../src/agent/call-preview.js';
import { defineTool, type ToolContext } from '../../src/agent/tool.js';
import { parsePolicyText } from '../../src/approvals/policy-file.js';
import { previewTemplateProblem, renderPreviewTemplate } from '../../src/approvals/preview-template.js';
import { byRiskThenAge } from '../../src/approvals/risk.js';
import { runPolicyCli } from '../../src/cli/policy-cli.js';
import { toolNames } from '../../src/tools/built-in-tools.js';
import { createDeleteNoteTool } from '../../src/tools/delete-note.js';
import type { NotesStore } from '../../src/tools/ports.js';
import { createPostMessageTool } from '../../src/tools/post-message.js';

const facts = (args: unknown) => ({
  args,
  tool: 'gh__create_issue',
  requester: 'U1',
  channel: 'C1',
  team: 'T1',
  agent: 'main',
});
const context: ToolContext = {
  teamId: 'T1',
  conversationId: 'conv_1',
  channelId: 'C1',
  threadTs: '1.1',
  runId: 'run_1',
  requesterId: 'U1',
};
const parse = (json: unknown) => parsePolicyText(JSON.stringify(json), 'policy.json', toolNames());

describe('preview templates', () => {
  it('fill in the arguments, escaped for Slack so that nothing in them can mention or link', () => {
    const text = renderPreviewTemplate(
      'Create issue {{args.title}} in {{args.repo}} for {{requester}}',
      facts({ title: 'Hi <!channel> & <@U999|x> <https://evil|ok>', repo: 'acme/app' }),
    );
    expect(text).toBe(
      'Create issue Hi &lt;!channel&gt; &amp; &lt;@U999|x&gt; &lt;https://evil|ok&gt; in acme/app for U1',
    );
  });

  it('show objects as JSON, leave missing values empty, and keep two lines', () => {
    expect(renderPreviewTemplate('Labels {{args.labels}}{{args.none}}', facts({ labels: ['a', 'b'] }))).toBe(
      'Labels ["a","b"]',
    );
    expect(renderPreviewTemplate('{{args.text}}', facts({ text: 'one\ntwo\nthree' }))).toBe('one\ntwo …');
    expect(renderPreviewTemplate('{{args.none}}', facts({}))).toBeUndefined();
  });

  it('refuse unescaped tags, partials and broken syntax when the policy is loaded', () => {
    expect(previewTemplateProblem('Create {{args.title}}')).toBeUndefined();
    expect(previewTemplateProblem('{{#args.draft}}Draft {{/args.draft}}{{args.title}}')).toBeUndefined();
    expect(previewTemplateProblem('Create {{{args.title}}}')).toMatch(/unescaped/);
    expect(previewTemplateProblem('Create {{&args.title}}')).toMatch(/unescaped/);
    expect(previewTemplateProblem('{{#args.x}}{{{args.y}}}{{/args.x}}')).toMatch(/unescaped/);
    expect(previewTemplateProblem('{{> other}}')).toMatch(/partial/);
    expect(previewTemplateProblem('{{#args.x}} open')).toMatch(/not a valid template/);
  });
});

describe('risk and preview in the policy file', () => {
  it('are laid like any field: defaults, then the tool, then the rule that applies; risk is stored in the rule', () => {
    const loaded = parse({
      defaults: { risk: 'low' },
      tools: {
        post_message: {
          risk: 'high',
          rules: [
            { when: "args.channel == 'CALL'", risk: 'critical', preview: 'To everyone: {{args.text}}' },
          ],
        },
        gh__create_issue: { preview: 'Create issue {{args.title}} in {{args.repo}}' },
      },
    });
    if (!loaded.ok) throw new Error(loaded.problems.join('\n'));
    const { policy } = loaded;
    expect(policy.forTool('create_note').rule.risk).toBe('low');
    expect(policy.forTool('post_message').rule.risk).toBe('high');
    expect(policy.forTool('post_message').preview).toBeUndefined();
    const call = policy.forCall({ ...facts({ channel: 'CALL', text: 'x' }), tool: 'post_message' });
    expect(call.rule.risk).toBe('critical');
    expect(call.preview).toBe('To everyone: {{args.text}}');
    expect(policy.forTool('gh__create_issue').preview).toBe('Create issue {{args.title}} in {{args.repo}}');
    expect(policy.forTool('gh__create_issue').rule.risk).toBe('low');
  });

  it('a rule without risk reads as before (no field), and bad values are problems with their fix', () => {
    const plain = parse({ tools: { create_note: { quorum: 1 } } });
    if (!plain.ok) throw new Error(plain.problems.join('\n'));
    expect('risk' in plain.policy.forTool('create_note').rule).toBe(false);
    const bad = parse({ tools: { create_note: { risk: 'extreme', preview: 'Note {{{args.text}}}' } } });
    expect(bad.ok).toBe(false);
    const problems = bad.ok ? [] : bad.problems;
    expect(problems).toContainEqual(
      expect.stringMatching(/tools\.create_note\.risk: .*"low", "medium", "high" or "critical"/),
    );
    expect(problems).toContainEqual(
      expect.stringMatching(/tools\.create_note\.preview: uses an unescaped tag/),
    );
  });
});

describe('byRiskThenAge', () => {
  it('puts the highest risk first, then the oldest; requests without a risk last', () => {
    const item = (id: string, createdAt: number, risk?: 'low' | 'medium' | 'high' | 'critical') => ({
      id,
      createdAt,
      rule: risk ? { risk } : {},
    });
    const sorted = [
      item('a', 1),
      item('b', 2, 'low'),
      item('c', 3, 'critical'),
      item('d', 4, 'high'),
      item('e', 0, 'high'),
      item('f', 5, 'medium'),
    ].sort(byRiskThenAge);
    expect(sorted.map((i) => i.id)).toEqual(['c', 'e', 'd', 'f', 'b', 'a']);
  });
});

describe('previewCall', () => {
  const tool = (preview: () => Promise<string | undefined>) =>
    defineTool({
      name: 'x',
      description: 'x',
      parameters: z.object({ n: z.number() }),
      execute: () => 'done',
      preview,
    });
  const request = (t: ReturnType<typeof tool>, template?: string) => ({
    tool: t,
    template,
    parsed: { ok: true as const, args: { n: 1 } },
    facts: facts({ n: 1 }),
    context,
  });

  it('leaves out a preview that hangs, within the time allowed', async () => {
    const started = Date.now();
    const text = await previewCall(request(tool(() => new Promise(() => {}))), { timeoutMs: 100 });
    expect(text).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('leaves out a preview that fails, and logs why', async () => {
    const warnings: string[] = [];
    const logger = { debug() {}, info() {}, error() {}, warn: (m: string) => warnings.push(m) };
    const failing = tool(async () => {
      throw new Error('notes store down');
    });
    expect(await previewCall(request(failing), { logger })).toBeUndefined();
    expect(warnings).toEqual(['preview left out: it failed']);
  });

  it("uses the policy's template over the tool's own, and the tool's own only for arguments that parsed", async () => {
    const own = tool(async () => 'own words');
    expect(await previewCall(request(own))).toBe('own words');
    expect(await previewCall(request(own, 'Template {{args.n}}'))).toBe('Template 1');
    expect(await previewCall({ ...request(own), parsed: { ok: false, error: 'bad' } })).toBeUndefined();
  });
});

describe('built-in previews', () => {
  const notes: NotesStore = {
    list: async () => [{ id: 12, text: 'quarterly <!here> numbers\nsecond line' }],
    create: async () => ({ id: 1, text: '' }),
    delete: async () => true,
  };

  it('delete_note names the note and quotes its text from the store, escaped', async () => {
    const tool = createDeleteNoteTool(notes);
    expect(await tool.preview?.({ id: 12 }, context)).toBe(
      "Deletes note #12: 'quarterly &lt;!here&gt; numbers second line'",
    );
    expect(await tool.preview?.({ id: 99 }, context)).toBe('Deletes nothing: there is no note #99.');
  });

  it('post_message names the channel and quotes the message, mentions escaped so they ping nobody', async () => {
    const poster = { post: async () => ({ kind: 'posted' as const }), postText: async () => {} };
    const tool = createPostMessageTool(poster);
    expect(await tool.preview?.({ channel: 'C0GENERAL', text: 'Hi <@U123> *all*\nmore' }, context)).toBe(
      'Posts to <#C0GENERAL> as the bot:\n>Hi &lt;@U123&gt; *all* (and 1 more line)',
    );
  });
});

describe('docs/policy.md: Risk, previews and edits', () => {
  it('its example passes `npm run policy -- check`', async () => {
    const page = readFileSync(new URL('../../docs/policy.md', import.meta.url), 'utf8');
    const section = page.slice(page.indexOf('## Risk, previews and edits'));
    const example = /```json\n([\s\S]*?)```/.exec(section)?.[1];
    if (!example) throw new Error('no example in the section');
    const file = join(mkdtempSync(join(tmpdir(), 'policy-doc-')), 'policy.json');
    writeFileSync(file, example);
    const out: string[] = [];
    const err: string[] = [];
    const io = {
      out: (l: string) => out.push(l),
      err: (l: string) => err.push(l),
      env: { ADMIN_USER_IDS: 'UADMIN' },
    };
    const code = await runPolicyCli(['check', file], io);
    expect(err).toEqual([]);
    expect(code).toBe(0);
    const loaded = parsePolicyText(example, file, toolNames());
    if (!loaded.ok) throw new Error(loaded.problems.join('\n'));
    const announce = { ...facts({ channel: 'C0ANNOUNCE', text: 'x' }), tool: 'post_message' };
    expect(loaded.policy.forCall(announce).rule.risk).toBe('critical');
    expect(loaded.policy.forTool('list_notes').rule.risk).toBe('low');
    const issue = loaded.policy.forTool('github__create_issue');
    expect(renderPreviewTemplate(issue.preview ?? '', facts({ title: 'Bug', repo: 'acme/app' }))).toBe(
      'Create issue Bug in acme/app',
    );
  });
});
