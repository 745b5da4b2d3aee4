import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeOpenAI, reply, startFakeOpenAI } from '../support/fake-openai.js';
import { startTerminalSession, type TerminalSession } from '../support/terminal-rig.js';
import { rows } from './db-rows.js';

const QUESTION = 'Approve? [y]es / [n]o / [r]eason / [e]dit';
const NEW_ARGUMENTS = 'New arguments (JSON, empty line to go back): ';

/**
 * The terminal conversation (`npm run chat`) in this process, typed into line by line: what it asks, what it
 * prints, what it stores. test/e2e/terminal-chat.test.ts runs the command itself for what needs a process.
 */
describe('terminal chat session: approvals at the prompt', () => {
  let model: FakeOpenAI;
  let dir: string;
  let dbPath: string;
  const open: TerminalSession[] = [];

  beforeEach(async () => {
    model = await startFakeOpenAI();
    dir = mkdtempSync(join(tmpdir(), 'chat-session-'));
    dbPath = join(dir, 'bot.db');
  });
  afterEach(async () => {
    for (const session of open.splice(0)) {
      session.end();
      await session.done;
    }
    await model.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const chat = async (thread: string, user: string, env: Record<string, string> = {}) => {
    const session = await startTerminalSession({
      thread,
      user,
      env: { OPENAI_BASE_URL: model.baseURL, DATABASE_PATH: dbPath, ...env },
    });
    open.push(session);
    return session;
  };
  const toolOutputs = (request: number) =>
    model.requests[request]?.messages.filter((m) => m.role === 'tool').map((m) => m.content);
  const actorsOf = async (kind: string) =>
    (await rows(dbPath, 'SELECT actor FROM audit_events WHERE kind = ? ORDER BY seq', kind)).map(
      (e) => e.actor,
    );

  it('shows the agent, the tool and its arguments; y runs the tool and prints the answer', async () => {
    model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'hello' } }]),
      reply.text('I added the note.'),
    );
    const c = await chat('notes', 'alice');
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
    await c.done;
    expect(await rows(dbPath, 'SELECT team_id, text, created_by FROM notes')).toEqual([
      { team_id: 'local', text: 'hello', created_by: 'alice' },
    ]);
    expect(await actorsOf('approval.approved')).toEqual(['alice']);
    // Nothing left owed by the session that ended (the decision's card update was written off).
    expect(await rows(dbPath, 'SELECT id FROM deliveries')).toEqual([]);
  });

  it('r asks for a reason of at most 500 characters, as in Slack; the model reads it', async () => {
    model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'secret' } }]),
      reply.text('Understood.'),
    );
    const c = await chat('reasons', 'alice');
    await c.waitFor('you> ');
    c.send('note the secret');
    await c.waitFor(QUESTION);
    c.send('r');
    await c.waitFor('Reason: ');
    c.send('x'.repeat(501));
    const refused = await c.waitFor('Reason: ', 2);
    expect(refused).toContain('Keep the reason under 500 characters (this one has 501); type it again.');
    c.send('not in notes, please');
    await c.waitFor('agent> Understood.');
    expect(toolOutputs(1)).toEqual([
      'Tool execution was not approved. Rejected by <@alice>, who said: "not in notes, please"',
    ]);
    expect(await rows(dbPath, 'SELECT id FROM notes')).toEqual([]);
  });

  it('e asks for the arguments again until they fit the schema, then runs the tool with them', async () => {
    model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'helo' } }]),
      reply.text('Saved.'),
    );
    const c = await chat('edits', 'alice');
    await c.waitFor('you> ');
    c.send('note helo');
    await c.waitFor(QUESTION);
    c.send('e');
    await c.waitFor(NEW_ARGUMENTS);
    c.send('{"txt": "hello"}');
    // Straight back to the arguments, not to the question.
    const refused = await c.waitFor(NEW_ARGUMENTS, 2);
    expect(refused).toContain('Not changed: The arguments are invalid: text:');
    expect(refused.split(QUESTION)).toHaveLength(2);
    c.send('{"text": "hello"}');
    await c.waitFor('agent> Saved.');
    expect(await rows(dbPath, 'SELECT text FROM notes')).toEqual([{ text: 'hello' }]);
    expect(await rows(dbPath, 'SELECT arguments, edited_arguments FROM approvals')).toEqual([
      { arguments: '{"text":"helo"}', edited_arguments: '{"text":"hello"}' },
    ]);
    expect(await actorsOf('approval.edited')).toEqual(['alice']);
  });

  it('e then an empty line goes back to the question', async () => {
    model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'as is' } }]),
      reply.text('Saved as is.'),
    );
    const c = await chat('edit-back', 'alice');
    await c.waitFor('you> ');
    c.send('note as is');
    await c.waitFor(QUESTION);
    c.send('e');
    await c.waitFor(NEW_ARGUMENTS);
    c.send('');
    await c.waitFor(QUESTION, 2);
    c.send('y');
    await c.waitFor('agent> Saved as is.');
    expect(await rows(dbPath, 'SELECT text FROM notes')).toEqual([{ text: 'as is' }]);
  });

  it('Ctrl-D at the question says the request stays pending and how to resume; --thread asks again', async () => {
    model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: 'later' } }]));
    const first = await chat('resume-me', 'alice');
    await first.waitFor('you> ');
    first.send('note later');
    await first.waitFor(QUESTION);
    first.end();
    await first.done;
    expect(first.output().slice(first.output().lastIndexOf(QUESTION) + QUESTION.length)).toBe(
      ' \nThe request stays pending; answer it later with:\n  npm run chat -- --thread resume-me --user alice\n',
    );

    model.enqueue(reply.text('Done, noted.'));
    const second = await chat('resume-me', 'alice');
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

  it('a requester who may not decide is told so instead of being asked; an admin decides later', async () => {
    model.enqueue(reply.toolCalls([{ name: 'delete_note', arguments: { id: 7 } }]));
    const first = await chat('policy', 'alice', { ADMIN_USER_IDS: 'U0ADMIN' });
    await first.waitFor('you> ');
    first.send('delete note 7');
    const told = await first.waitFor('The request stays pending; someone who may decide it can run:');
    expect(told).toContain(
      'You asked for this, and delete_note cannot be approved by the person who asked. It can be decided by admins.',
    );
    expect(told).toContain('npm run chat -- --thread policy --user THEIR_NAME');
    expect(told).not.toContain(QUESTION);
    // Back to the conversation, the request untouched and nothing refused in the audit log.
    await first.waitFor('you> ', 2);
    expect(await actorsOf('approval.refused')).toEqual([]);
    first.end();
    await first.done;

    model.enqueue(reply.text('There was no note 7.'));
    const admin = await chat('policy', 'U0ADMIN', { ADMIN_USER_IDS: 'U0ADMIN' });
    await admin.waitFor(QUESTION);
    admin.send('yes');
    await admin.waitFor('agent> There was no note 7.');
    expect(toolOutputs(1)).toEqual(['There is no note #7.']);
  });

  it('post_message says nothing was posted, without an error or a stack trace', async () => {
    model.enqueue(
      reply.toolCalls([{ name: 'post_message', arguments: { channel: 'C0123', text: 'hi' } }]),
      reply.text('I cannot post from here.'),
    );
    const c = await chat('post', 'alice', {
      APPROVAL_POLICY_FILE: await policyFile({
        tools: { post_message: { approvers: ['requester'], allowSelfApproval: true } },
      }),
    });
    await c.waitFor('you> ');
    c.send('post hi to C0123');
    await c.waitFor(QUESTION);
    c.send('y');
    await c.waitFor('agent> I cannot post from here.');
    expect(toolOutputs(1)).toEqual([
      'Nothing was posted: this conversation is not connected to Slack, so post_message cannot post anywhere.',
    ]);
    expect(c.logs).toEqual([]);
    expect(c.output()).not.toMatch(/\n\s+at /);
  });

  it('Slack markup is shown as plain text: mentions, channels, links', async () => {
    model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'x' } }]),
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'y' } }]),
      reply.text('Ask <@bob> in <#C0123|general>, see <https://x.example/a|the guide> &amp; more.'),
    );
    const c = await chat('markup', 'alice', {
      APPROVAL_POLICY_FILE: await policyFile({
        tools: { create_note: { approvers: ['requester', 'U0BOB'], allowStandingApproval: true } },
      }),
    });
    await c.waitFor('you> ');
    c.send('two notes');
    const shown = await c.waitFor(QUESTION);
    expect(shown).toContain('may be decided by the requester or U0BOB');
    c.send('y');
    await c.waitFor(QUESTION, 2);
    c.send('y');
    const answer = await c.waitFor('agent> Ask');
    expect(answer).toContain('agent> Ask bob in #general, see the guide (https://x.example/a) & more.');
    expect(answer).not.toMatch(/<[@#!]/);
  });

  const policyFile = async (policy: unknown): Promise<string> => {
    const { writeFileSync } = await import('node:fs');
    const file = join(dir, 'policy.json');
    writeFileSync(file, JSON.stringify(policy));
    return file;
  };
});
