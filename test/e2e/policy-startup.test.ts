import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type BotProcess, runBotProcessToExit, startBotProcess } from '../support/bot-process.js';
import { type FakeSlack, startFakeSlack } from '../support/fake-slack.js';
import { waitUntil } from '../support/wait.js';
import { SECRET } from './harness.js';
import { writePolicy } from './policy-support.js';

describe('npm start with an approval policy file', () => {
  let slack: FakeSlack;
  let dir: string;
  let bot: BotProcess | undefined;
  beforeEach(async () => {
    slack = await startFakeSlack();
    dir = mkdtempSync(join(tmpdir(), 'policy-start-'));
  });
  afterEach(async () => {
    await bot?.kill();
    bot = undefined;
    await slack.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const env = (policyFile: string) => ({
    SLACK_BOT_TOKEN: 'xoxb-policy-test',
    SLACK_SIGNING_SECRET: SECRET,
    SLACK_API_URL: slack.url,
    OPENAI_API_KEY: 'sk-policy-test',
    OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
    DATABASE_PATH: join(dir, 'bot.db'),
    APPROVAL_POLICY_FILE: policyFile,
  });

  it('an invalid file stops start-up with exit code 1, naming the file, the path, the problem and the fix', async () => {
    const file = writePolicy({
      tools: { delete_notes: { quorum: 2 }, create_note: { expiresAfter: 'soon' } },
    });
    const result = await runBotProcessToExit({ env: env(file) });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Approval policy error: the bot cannot start.');
    expect(result.stderr).toContain(
      `  - ${file}: tools.create_note.expiresAfter: "soon" is not a duration; use a duration such as "30m", "24h" or "7d", or null for never`,
    );
    expect(result.stderr).toContain(
      `  - ${file}: tools.delete_notes: unknown tool "delete_notes"; use one of `,
    );
    expect(slack.calls).toEqual([]);
  });

  it('a valid file is summarised in one line when the bot starts', async () => {
    const file = writePolicy({
      defaults: { expiresAfter: '7d' },
      tools: {
        delete_note: { approvers: ['admins', 'S0OPS'], quorum: 2 },
        github__merge: { approvers: ['admins'] },
      },
    });
    bot = await startBotProcess({ env: env(file) });
    const line = bot
      .output()
      .split('\n')
      .find((l) => l.startsWith('Approval policy ('));
    expect(line).toBe(
      `Approval policy (${file}): create_note: conversation or admins, expires after 7d; ` +
        'delete_note: admins or S0OPS, 2 approvals, no self-approval, no standing approval, expires after 7d; ' +
        'get_current_time: no approval; github__merge: when the tool asks, admins, expires after 7d; ' +
        'list_notes: no approval; post_message: admins, no self-approval, no standing approval, expires after 7d; ' +
        'other tools: when the tool asks, conversation or admins, expires after 7d',
    );
  });

  it('the file is read once: worker threads build their policy from the text the intake thread validated', async () => {
    // A named pipe gives its text to one reader only: a worker reading the file again would wait forever.
    const file = join(dir, 'policy.fifo');
    execFileSync('mkfifo', [file]);
    const written = writeFile(file, JSON.stringify({ defaults: { expiresAfter: '7d' } }));
    bot = await startBotProcess({ env: { ...env(file), WORKERS: '1', HEALTHZ_DETAILS: 'true' } });
    await written;
    const url = `${bot.url}/healthz`;
    const workers = async () => ((await (await fetch(url)).json()) as { workers: number }).workers;
    // A worker starts in a second or two; on two cores shared with the benchmarks' smoke runs it has taken over 15 s.
    await waitUntil(async () => (await workers()) === 1, {
      timeoutMs: 45_000,
      message: 'the worker never became ready',
    });
  }, 60_000);
});
