import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADMINS_ONLY_TEXT } from '../../src/slack/blocks/approvals-report.js';
import { type SeedApproval, seedApprovals } from '../support/audit-seed.js';
import { type SlackCall, slackReply } from '../support/fake-slack.js';
import { postSlashCommand, slashCommandBody } from '../support/slack-requests.js';
import { DATABASE_KINDS } from '../support/test-database.js';
import { type Harness, SECRET, startHarness } from './harness.js';

const ADMIN = 'UADMIN';
const MINUTE = 60_000;

describe.each(DATABASE_KINDS)('/approvals on %s', (kind) => {
  let h: Harness;

  const seed = (...seeds: SeedApproval[]) => seedApprovals(h.database, ...seeds);

  /** Runs the command as `user` and resolves with what the bot sent to the command's response_url. */
  const command = async (text: string, user = ADMIN): Promise<SlackCall> => {
    const answer = await h.approvals(text, user);
    expect(answer.params.response_type).toBe('ephemeral');
    return answer;
  };
  const shown = (call: SlackCall) => JSON.stringify(call.params.blocks ?? []);
  const blockCount = (call: SlackCall) => (Array.isArray(call.params.blocks) ? call.params.blocks.length : 0);

  beforeEach(async () => {
    h = await startHarness({ kind, env: { ADMIN_USER_IDS: ADMIN } });
  });
  afterEach(async () => {
    await h.close();
  });

  it('refuses anyone who is not an admin, whatever they ask, revealing nothing', async () => {
    const [id] = await seed({ toolName: 'delete_note', arguments: { id: 7 } });
    for (const text of ['', 'pending', `show ${id}`, 'stats', 'history', 'help', 'nonsense']) {
      const answer = await command(text, 'U2');
      expect(answer.params.text).toBe(ADMINS_ONLY_TEXT);
      expect(answer.params.blocks).toBeUndefined();
    }
  });

  it('without arguments: the pending approvals and the latest decisions', async () => {
    const [waiting, , decided] = await seed(
      { toolName: 'delete_note', arguments: { id: 3 } },
      { toolName: 'post_message', arguments: { channel: 'C2', text: 'hi' } },
      { status: 'rejected', decidedBy: 'U22' },
    );
    const answer = await command('');
    expect(shown(answer)).toContain('Pending approvals (2)');
    expect(shown(answer)).toContain(String(waiting));
    expect(shown(answer)).toContain('Latest decisions');
    expect(shown(answer)).toContain(`rejected by <@U22>`);
    expect(shown(answer)).toContain(String(decided));
  });

  it('pending: paginated within the block limit, with the command for the next page', async () => {
    await seed(...Array.from({ length: 20 }, (_, i) => ({ createdAt: Date.now() - (20 - i) * MINUTE })));
    const first = await command('pending');
    expect(blockCount(first)).toBeLessThanOrEqual(50);
    expect(shown(first).match(/:lock:/g)).toHaveLength(15);
    expect(shown(first)).toContain('Showing 1–15 of 20 · next: `/approvals pending page:2`');
    const second = await command('pending page:2');
    expect(shown(second).match(/:lock:/g)).toHaveLength(5);
    expect(shown(second)).toContain('Showing 16–20 of 20 · previous: `/approvals pending page:1`');
  });

  it('history: by user (who asked or voted), tool and time', async () => {
    const now = Date.now();
    const [old, byBob, bobAsked] = await seed(
      { toolName: 'delete_note', status: 'rejected', decidedBy: 'UBOB', createdAt: now - 10 * 86_400_000 },
      { toolName: 'delete_note', status: 'rejected', decidedBy: 'UBOB', createdAt: now - 86_400_000 },
      { toolName: 'create_note', status: 'executed', decidedBy: 'U22', requesterId: 'UBOB' },
      { toolName: 'delete_note', status: 'executed', decidedBy: 'U22' },
    );
    const answer = await command('history <@UBOB|bob> delete_note since:7d');
    expect(shown(answer)).toContain(String(byBob));
    expect(shown(answer)).not.toContain(String(old));
    expect(shown(answer)).not.toContain(String(bobAsked));
    expect(shown(answer)).toContain('Showing 1–1 of 1');
    const all = await command('history <@UBOB|bob>');
    expect(shown(all)).toContain('Showing 1–3 of 3');
  });

  it('show: full arguments with secrets redacted, every vote and who cast it, the result and the trail', async () => {
    const [id] = await seed({
      toolName: 'post_message',
      arguments: { channel: 'C9', text: 'deploy with xoxb-123456789012-abcdefabcdef', password: 'hunter2' },
      status: 'executed',
      decidedBy: 'U22',
      result: 'Posted to <#C9>.',
    });
    const answer = await command(`show ${id}`);
    const text = shown(answer);
    expect(text).toContain(`post_message · ${id}`);
    expect(text).toContain('\\"channel\\": \\"C9\\"');
    expect(text).toContain('deploy with [redacted]');
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('xoxb-123456789012');
    expect(text).toContain('<@U22> approved');
    expect(text).toContain('*Result:*');
    // Shown literally (preformatted rich_text), so nothing needs escaping.
    expect(text).toContain('Posted to <#C9>.');
    expect(text).toContain('`approval.requested` <@U1>');
    expect(text).toContain('`approval.approved` <@U22>');
  });

  it('show: an unknown id or another workspace’s request is simply not found', async () => {
    const [elsewhere] = await seed({ teamId: 'T99' });
    const answer = await command(`show ${elsewhere}`);
    expect(shown(answer)).toContain('There is no request');
  });

  it('stats: counts by tool and outcome, median time to decision', async () => {
    const now = Date.now();
    await seed(
      {
        toolName: 'create_note',
        status: 'executed',
        decidedBy: 'U22',
        createdAt: now,
        decidedAt: now + MINUTE,
      },
      {
        toolName: 'create_note',
        status: 'rejected',
        decidedBy: 'U22',
        createdAt: now,
        decidedAt: now + 3 * MINUTE,
      },
      {
        toolName: 'delete_note',
        status: 'executed',
        decidedBy: 'U22',
        createdAt: now,
        decidedAt: now + 10 * MINUTE,
      },
      { toolName: 'delete_note' },
    );
    const answer = await command('stats');
    const text = shown(answer);
    expect(text).toContain('`create_note`: 1 executed · 1 rejected');
    expect(text).toContain('`delete_note`: 1 executed · 1 pending');
    expect(text).toContain('Median time to decision: *3m* over 3 decided requests.');
  });

  it('help explains the syntax; unknown syntax gets the help, not an error', async () => {
    const help = await command('help');
    expect(shown(help)).toContain('/approvals history [@user] [tool] [since:7d]');
    const unknown = await command('frobnicate <!channel>');
    expect(shown(unknown)).toContain('I do not know `frobnicate`');
    expect(shown(unknown)).toContain('/approvals show ID');
    const badSince = await command('stats since:yesterday');
    expect(shown(badSince)).toContain('is not a time such as `since:7d`');
    const badShow = await command('show <!here>');
    expect(shown(badShow)).not.toContain('<!here>');
  });
});

describe('/approvals for workspace admins', () => {
  it('admits workspace admins and owners when configured, asking users.info once', async () => {
    const h = await startHarness({ env: { AUDIT_INCLUDE_WORKSPACE_ADMINS: 'true' } });
    try {
      h.slack.setResponse('users.info', (params) =>
        slackReply.ok({ user: { id: params.user, is_admin: params.user === 'UWSADMIN', is_owner: false } }),
      );
      const ask = async (user: string) => {
        const id = randomUUID();
        const fields = slashCommandBody({
          command: '/approvals',
          text: 'pending',
          userId: user,
          channelId: 'C1',
          responseUrl: h.slack.responseUrl(id),
        });
        await postSlashCommand(h.url, SECRET, fields);
        return h.slack.waitForCall('response_url', (c) => c.params.responseUrlId === id);
      };
      expect(JSON.stringify((await ask('UWSADMIN')).params.blocks)).toContain('Pending approvals');
      expect(JSON.stringify((await ask('UWSADMIN')).params.blocks)).toContain('Pending approvals');
      expect((await ask('UMEMBER')).params.text).toBe(ADMINS_ONLY_TEXT);
      expect(h.slack.callsTo('users.info').filter((c) => c.params.user === 'UWSADMIN')).toHaveLength(1);
    } finally {
      await h.close();
    }
  });
});
