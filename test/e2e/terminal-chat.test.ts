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

  it('r asks for a reason: the tool does not run and the model reads the reason', async () => {
    model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'secret' } }]),
      reply.text('Understood.'),
    );
    const c = chat('reasons', 'alice');
    await c.waitFor('you> ');
    c.send('note the secret');
    await c.waitFor(QUESTION);
    c.send('r');
    await c.waitFor('Reason: ');
    c.send('not in notes, please');
    await c.waitFor('agent> Understood.');
    expect(toolOutputs(1)).toEqual([
      'Tool execution was not approved. Rejected by <@alice>, who said: "not in notes, please"',
    ]);
    expect(await rows(dbPath, 'SELECT id FROM notes')).toEqual([]);
  });

  it('e edits the arguments: invalid ones are refused by the schema, valid ones run', async () => {
    model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'helo' } }]),
      reply.text('Saved.'),
    );
    const c = chat('edits', 'alice');
    await c.waitFor('you> ');
    c.send('note helo');
    await c.waitFor(QUESTION);
    c.send('e');
    await c.waitFor('New arguments (JSON): ');
    c.send('{"txt": "hello"}');
    const refused = await c.waitFor(QUESTION, 2);
    expect(refused).toContain('Not changed: The arguments are invalid: text:');
    c.send('e');
    await c.waitFor('New arguments (JSON): ', 2);
    c.send('{"text": "hello"}');
    await c.waitFor('agent> Saved.');
    expect(await rows(dbPath, 'SELECT text FROM notes')).toEqual([{ text: 'hello' }]);
    expect(await rows(dbPath, 'SELECT arguments, edited_arguments FROM approvals')).toEqual([
      { arguments: '{"text":"helo"}', edited_arguments: '{"text":"hello"}' },
    ]);
    expect(await actorsOf('approval.edited')).toEqual(['alice']);
  });

  it('--thread resumes the history and asks again for the approval left pending', async () => {
    model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: 'later' } }]));
    const first = chat('resume-me', 'alice');
    await first.waitFor('you> ');
    first.send('note later');
    await first.waitFor(QUESTION);
    first.end();
    expect((await first.exited).code).toBe(0);

    model.enqueue(reply.text('Done, noted.'));
    const second = chat('resume-me', 'alice');
    const shown = await second.waitFor(QUESTION);
    expect(shown).toContain('Earlier in this conversation:');
    expect(shown).toContain('alice> note later');
    expect(shown).toContain('wants to run create_note');
    second.send('y');
    await second.waitFor('agent> Done, noted.');
    expect(model.requests).toHaveLength(2);
    expect(model.requests[1]?.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
      'note later',
    ]);
    expect(toolOutputs(1)).toEqual(['Created note #1.']);
  });

  it('the policy applies: an admins-only call waits for an admin in another session', async () => {
    model.enqueue(reply.toolCalls([{ name: 'delete_note', arguments: { id: 7 } }]));
    const first = chat('policy', 'alice', { ADMIN_USER_IDS: 'U0ADMIN' });
    await first.waitFor('you> ');
    first.send('delete note 7');
    await first.waitFor(QUESTION);
    first.send('y');
    const refused = await first.waitFor('It stays pending');
    expect(refused).toContain(
      'You asked for this, and delete_note cannot be approved by the person who asked. It can be decided by admins.',
    );
    first.end();
    await first.exited;

    model.enqueue(reply.text('There was no note 7.'));
    const admin = chat('policy', 'U0ADMIN', { ADMIN_USER_IDS: 'U0ADMIN' });
    await admin.waitFor(QUESTION);
    admin.send('yes');
    await admin.waitFor('agent> There was no note 7.');
    expect(toolOutputs(1)).toEqual(['There is no note #7.']);
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
    expect(started).toContain('MCP server records: records__read_record, records__write_record');
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
      // Bolt checks its token right after start; let that finish before closing the fake Slack.
      await slackBot.slack.waitForCall('auth.test');
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
