import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, TSX_LOADER } from '../support/bot-process.js';
import { type ChatProcess, startChatProcess } from '../support/chat-process.js';
import { type FakeOpenAI, reply, startFakeOpenAI } from '../support/fake-openai.js';
import { rows } from './db-rows.js';
import { startHarness } from './harness.js';

const QUESTION = 'Approve? [y]es / [n]o / [r]eason / [e]dit';

/**
 * `npm run chat` as a command (compiled, in its own process): start-up, MCP servers it starts, a terminal
 * closed mid-answer. What the session asks and prints is tested in this process: terminal-session.test.ts.
 */
describe('npm run chat: a terminal conversation with y/n approvals', () => {
  let model: FakeOpenAI;
  let dir: string;
  let dbPath: string;
  const running: ChatProcess[] = [];

  beforeEach(async () => {
    model = await startFakeOpenAI();
    dir = mkdtempSync(join(tmpdir(), 'chat-e2e-'));
    dbPath = join(dir, 'bot.db');
  });
  afterEach(async () => {
    for (const chat of running.splice(0)) {
      chat.end();
      await chat.exited;
    }
    await model.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const chat = (thread: string, user: string, env: Record<string, string> = {}) => {
    const started = startChatProcess(
      ['--thread', thread, '--user', user],
      { OPENAI_BASE_URL: model.baseURL, OPENAI_MODEL: 'fake-model', DATABASE_PATH: dbPath, ...env },
      dir,
    );
    running.push(started);
    return started;
  };
  const toolOutputs = (request: number) =>
    model.requests[request]?.messages.filter((m) => m.role === 'tool').map((m) => m.content);
  const actorsOf = async (kind: string) =>
    (await rows(dbPath, 'SELECT actor FROM audit_events WHERE kind = ? ORDER BY seq', kind)).map(
      (e) => e.actor,
    );

  it('without a configured model it says what to set and exits 1', async () => {
    const started = startChatProcess(['--thread', 't'], { DATABASE_PATH: dbPath }, dir);
    const exit = await started.exited;
    expect(exit.code).toBe(1);
    expect(started.stderr()).toContain('OPENAI_API_KEY');
    expect(started.stderr()).toContain('OPENAI_BASE_URL');
  });

  it('--help, -h and help print the usage and exit 0, even with no model configured', async () => {
    for (const args of [['--help'], ['-h'], ['help']]) {
      const started = startChatProcess(args, { DATABASE_PATH: dbPath }, dir);
      const exit = await started.exited;
      expect([exit.code, started.stderr()]).toEqual([0, '']);
      expect(started.stdout()).toMatch(/^Usage: npm run chat -- \[--thread NAME\] \[--user NAME\]\n/);
      expect(started.stdout()).toContain('--thread NAME  the conversation to continue');
    }
  });

  it('shows the agent, the tool and its arguments; y runs the tool and prints the answer', async () => {
    model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'hello' } }]),
      reply.text('I added the note.'),
    );
    const c = chat('notes', 'alice');
    await c.waitFor('you> ');
    c.send('please add a note saying hello');
    const shown = await c.waitFor(QUESTION);
    expect(shown).toContain('Agent "agent" wants to run create_note with arguments:');
    expect(shown).toContain('"text": "hello"');
    expect(shown).toContain('requested by alice');
    c.send('y');
    await c.waitFor('agent> I added the note.');
    expect(toolOutputs(1)).toEqual(['Created note #1.']);
    c.end();
    expect((await c.exited).code).toBe(0);
    expect(await rows(dbPath, 'SELECT team_id, text, created_by FROM notes')).toEqual([
      { team_id: 'local', text: 'hello', created_by: 'alice' },
    ]);
    expect(await actorsOf('approval.approved')).toEqual(['alice']);
  });

  it('conditional rules apply in the terminal too, and the rule that applied is shown', async () => {
    const policyFile = join(dir, 'policy.json');
    writeFileSync(
      policyFile,
      JSON.stringify({
        tools: { create_note: { rules: [{ when: "args.text.startsWith('draft')", quorum: 1 }] } },
      }),
    );
    model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'draft: plan' } }]),
      reply.text('Drafted.'),
    );
    const c = chat('rules', 'alice', { APPROVAL_POLICY_FILE: policyFile });
    await c.waitFor('you> ');
    c.send('draft a plan');
    const shown = await c.waitFor(QUESTION);
    expect(shown).toContain("rule tools.create_note.rules[0] (args.text.startsWith('draft'))");
    c.send('y');
    await c.waitFor('agent> Drafted.');
    c.end();
    expect((await c.exited).code).toBe(0);
  });

  it('MCP tools are offered in the terminal too, and need approval like in Slack', async () => {
    const records = join(dir, 'records.json');
    const config = join(dir, 'mcp.json');
    const server = {
      command: process.execPath,
      args: ['--import', TSX_LOADER, join(REPO_ROOT, 'test', 'fixtures', 'mcp-server.ts')],
      env: { RECORDS_FILE: records },
    };
    writeFileSync(config, JSON.stringify({ mcpServers: { records: server } }));
    model.enqueue(
      reply.toolCalls([{ name: 'records__write_record', arguments: { id: 4, text: 'four' } }]),
      reply.text('Record 4 saved.'),
    );
    const c = chat('mcp', 'alice', { MCP_SERVERS_FILE: config });
    const started = await c.waitFor('you> ');
    expect(started).toContain(
      'MCP server records: records__read_record, records__write_record, records__list_entries',
    );
    c.send('save record 4');
    const shown = await c.waitFor(QUESTION);
    expect(shown).toContain('wants to run records__write_record');
    expect(existsSync(records)).toBe(false);
    c.send('y');
    await c.waitFor('agent> Record 4 saved.');
    expect(JSON.parse(readFileSync(records, 'utf8'))).toEqual({ 4: 'four' });
  });

  it('an answer cut off by a closed terminal is finished on --thread, and the Slack bot leaves it alone', async () => {
    model.enqueue(reply.hang());
    const first = chat('cut-off', 'alice');
    await first.waitFor('you> ');
    first.send('what time is it?');
    await model.waitForRequests(1);
    await first.kill();

    const slackBot = await startHarness({ dbPath });
    try {
      // Whatever the start-up's recovery took on has run.
      await slackBot.bot.conversations.idle();
      expect(slackBot.model.requests).toHaveLength(0);
      expect(slackBot.slack.callsTo('chat.postMessage')).toHaveLength(0);
      // The thread belongs to the terminal: the Slack bot's recovery does not take its run over.
      expect(await rows(dbPath, 'SELECT surface FROM conversations')).toEqual([{ surface: 'terminal' }]);
    } finally {
      await slackBot.close();
    }

    model.enqueue(reply.text('It is noon.'));
    const second = chat('cut-off', 'alice');
    await second.waitFor('agent> It is noon.');
    expect(model.requests[1]?.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
      'what time is it?',
    ]);
  });
});
