import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { childEnv, REPO_ROOT, TSX_LOADER } from '../support/bot-process.js';
import { reply } from '../support/fake-openai.js';
import type { SlackCall } from '../support/fake-slack.js';
import { waitUntil } from '../support/wait.js';
import { blocksText, writePolicy } from './policy-support.js';
import { type ProcessFixture, useProcessFixture } from './process-fixture.js';

/** `npm run policy -- ARGS` as a child process: its exit code and output. */
function policyCommand(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(
    process.execPath,
    ['--import', TSX_LOADER, join(REPO_ROOT, 'src/cli/policy.ts'), ...args],
    {
      cwd: REPO_ROOT,
      env: childEnv({}),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => {
    stdout += text;
  });
  child.stderr.setEncoding('utf8').on('data', (text: string) => {
    stderr += text;
  });
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

describe('npm run policy -- check FILE', () => {
  it('a valid file: the summary line the bot prints at start-up, exit 0', async () => {
    const file = writePolicy({
      tools: {
        post_message: { rules: [{ when: "args.channel == 'C0SANDBOX'", requireApproval: false }] },
      },
    });
    const result = await policyCommand(['check', file]);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe(
      `Approval policy (${file}): create_note: conversation or admins; delete_note: admins, no self-approval, no standing approval; ` +
        'get_current_time: no approval; list_notes: no approval; ' +
        "post_message: admins, no self-approval, no standing approval (rules[0] when args.channel == 'C0SANDBOX': no approval); " +
        'other tools: when the tool asks, conversation or admins',
    );
  });

  it('an invalid file: every problem, exit 1', async () => {
    const file = writePolicy({
      tools: {
        delete_note: { approvers: ['U0AAA'], quorum: 2 },
        post_message: { rules: [{ when: "user == 'U1'" }, { when: 'size(args.text) >' }] },
      },
    });
    const result = await policyCommand(['check', file]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toEqual([
      `Approval policy error: ${file} has 3 problem(s).`,
      `  - ${file}: tools.delete_note: quorum 2 cannot be reached by 1 listed approver(s); lower quorum or add approvers`,
      expect.stringMatching(/^ {2}- .*: tools\.post_message\.rules\[0\]\.when: Unknown variable: user; /),
      expect.stringMatching(/^ {2}- .*: tools\.post_message\.rules\[1\]\.when: Unexpected token: EOF; /),
    ]);
    const missing = await policyCommand(['check', join(REPO_ROOT, 'no-such-policy.json')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('cannot read the file (ENOENT)');
    expect((await policyCommand([])).code).toBe(2);
  });
});

describe('SIGHUP reloads APPROVAL_POLICY_FILE (the real entry point)', () => {
  let f: ProcessFixture;
  useProcessFixture((fixture) => {
    f = fixture;
  });

  const ephemerals = () =>
    f.slack.callsTo('chat.postEphemeral').map((c) => ({ user: c.params.user, text: String(c.params.text) }));

  async function askForNote(
    bot: Parameters<ProcessFixture['mention']>[0],
    count: number,
  ): Promise<SlackCall> {
    f.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: `note ${count}` } }]));
    await f.mention(bot, `write note ${count}`);
    const cards = await f.waitForCards(count);
    const card = cards[count - 1];
    if (!card) throw new Error('no card');
    return card;
  }

  it('a valid file takes effect for new requests, an invalid one is refused, waiting requests keep their rule', async () => {
    const file = writePolicy({ tools: { create_note: { approvers: ['U0BOSS'] } } });
    const bot = await f.start({ APPROVAL_POLICY_FILE: file });
    const first = await askForNote(bot, 1);
    expect(blocksText(first)).toContain('Approvers: <@U0BOSS>');

    writeFileSync(file, JSON.stringify({ tools: { create_note: { approvers: ['U0OTHER'] } } }));
    process.kill(bot.pid, 'SIGHUP');
    await waitUntil(() => bot.output().includes('approval policy reloaded'), { timeoutMs: 10_000 });
    expect(bot.output()).toContain(`Approval policy (${file}): create_note: U0OTHER;`);
    const loaded = await f.query(
      "SELECT payload FROM audit_events WHERE kind = 'policy.loaded' ORDER BY seq",
    );
    expect(loaded.map((row) => JSON.parse(String(row.payload)))).toEqual([
      { summary: expect.stringContaining('create_note: U0BOSS;') },
      { summary: expect.stringContaining('create_note: U0OTHER;'), reloaded: true },
    ]);
    const second = await askForNote(bot, 2);
    expect(blocksText(second)).toContain('Approvers: <@U0OTHER>');

    writeFileSync(file, JSON.stringify({ tools: { create_note: { approvers: ['nobody'] } } }));
    process.kill(bot.pid, 'SIGHUP');
    await waitUntil(() => bot.output().includes('approval policy not reloaded'), { timeoutMs: 10_000 });
    // Each problem is a log line of its own, written after that one: wait for it rather than expect it at once.
    await waitUntil(
      () => bot.output().includes(`tools.create_note.approvers[0]: \\"nobody\\" is not an approver`),
      { timeoutMs: 5_000, message: `the problem was not logged; output:\n${bot.output()}` },
    );
    const third = await askForNote(bot, 3);
    expect(blocksText(third)).toContain('Approvers: <@U0OTHER>');
    expect(await f.query("SELECT seq FROM audit_events WHERE kind = 'policy.loaded'")).toHaveLength(2);

    // The first request keeps the rule stored with it: the new approver cannot decide it, the old one can.
    f.model.enqueue(reply.text('Noted.'));
    await f.click(bot, first, 'approve', 'U0OTHER');
    await waitUntil(() => ephemerals().find((e) => e.user === 'U0OTHER'));
    expect(ephemerals()[0]?.text).toBe('You cannot decide this request. It can be decided by <@U0BOSS>.');
    await f.click(bot, first, 'approve', 'U0BOSS');
    await f.waitForText((t) => t === 'Noted.');
    expect(bot.output()).not.toContain('uncaught');
  });
});
