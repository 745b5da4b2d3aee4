import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runBotProcessToExit } from '../support/bot-process.js';
import { reply } from '../support/fake-openai.js';
import { DATABASE_KINDS } from '../support/test-database.js';
import { waitUntil } from '../support/wait.js';
import { cardTs } from './harness.js';
import { type ProcessFixture, startProcessFixture } from './process-fixture.js';

const AGENTS = {
  agents: [
    {
      name: 'triage',
      description: 'Files bug reports as notes.',
      instructions: 'You triage bug reports. File each one as a note.',
      model: 'triage-model',
      tools: ['create_note'],
    },
  ],
};

describe.each(DATABASE_KINDS)('a nested agent waiting for a decision survives SIGKILL, on %s', (kind) => {
  let f: ProcessFixture;
  let dir: string;
  beforeEach(async () => {
    f = await startProcessFixture({ kind });
    dir = mkdtempSync(join(tmpdir(), 'agents-crash-'));
    writeFileSync(join(dir, 'agents.json'), JSON.stringify(AGENTS));
  });
  afterEach(async () => {
    await f.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('killed while the card waits: the next process resumes inside the nested agent, and the tool runs once', async () => {
    const env = { AGENTS_FILE: join(dir, 'agents.json') };
    let bot = await f.start(env);
    f.model.enqueue(
      reply.toolCalls([{ name: 'triage', arguments: { input: 'Login fails on Safari' }, id: 'call_outer' }]),
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'Bug: login fails on Safari' } }]),
    );
    await f.mention(bot, 'please file this bug');
    const [card] = await f.waitForCards(1);
    if (!card) throw new Error('no card');
    expect(JSON.stringify(card.params.blocks)).toContain('triage → create_note');
    await waitUntil(
      async () => (await f.query('SELECT message_ts AS ts FROM approvals'))[0]?.ts === cardTs(card),
      { timeoutMs: 10_000 },
    );
    expect(await bot.kill('SIGKILL')).toBeNull();

    bot = await f.start(env);
    f.model.enqueue(reply.text('Filed it as a note.'), reply.text('Triage filed the bug.'));
    expect((await f.click(bot, card, 'approve', 'U2')).status).toBe(200);
    await f.waitForText((text) => text === 'Triage filed the bug.');
    const [, , nested, outer] = f.model.requests;
    expect(nested?.model).toBe('triage-model');
    expect(nested?.messages.slice(0, 2)).toEqual([
      { role: 'system', content: AGENTS.agents[0]?.instructions },
      { role: 'user', content: 'Login fails on Safari' },
    ]);
    expect(outer?.messages.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 'call_outer',
      content: 'Filed it as a note.',
    });
    expect(await f.query('SELECT COUNT(*) AS n FROM notes')).toEqual([{ n: 1 }]);
    await bot.kill('SIGTERM');
  });
});

describe('an invalid agents file', () => {
  it('stops npm start with exit code 1, listing every problem with its place', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agents-invalid-'));
    const file = join(dir, 'agents.json');
    writeFileSync(
      file,
      JSON.stringify({
        agents: [
          { ...AGENTS.agents[0], tools: ['launch_rockets', 'researcher'] },
          { name: 'researcher', description: 'Reads.', instructions: 'Read.', tools: ['triage'] },
        ],
      }),
    );
    try {
      const result = await runBotProcessToExit({
        env: {
          SLACK_BOT_TOKEN: 'xoxb-test',
          SLACK_SIGNING_SECRET: 'secret',
          OPENAI_API_KEY: 'sk-test',
          DATABASE_PATH: join(dir, 'bot.db'),
          AGENTS_FILE: file,
        },
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`AGENTS_FILE ${file} is invalid:`);
      expect(result.stderr).toContain('agents.triage.tools: unknown tool "launch_rockets"');
      expect(result.stderr).toContain('agents: triage → researcher → triage call each other in a circle');
      expect(result.stderr).toContain('fix the file (see docs/agents.md) or unset AGENTS_FILE');
      expect(result.stderr).not.toMatch(/\n\s+at /);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
