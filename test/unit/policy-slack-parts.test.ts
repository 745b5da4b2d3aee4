import { webApi } from '@slack/bolt';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { builtInPolicy } from '../../src/approvals/policy.js';
import { silentLogger } from '../../src/logger.js';
import { reminderText } from '../../src/slack/approval-notifier.js';
import { createUserGroupDirectory } from '../../src/slack/user-groups.js';
import { type FakeSlack, slackReply, startFakeSlack } from '../support/fake-slack.js';

const request = {
  id: 'apr_0123456789abcdef01234567',
  toolName: 'delete_note',
  requesterId: 'U1',
  rule: builtInPolicy().forTool('delete_note').rule,
};

describe('user group directory', () => {
  let slack: FakeSlack;
  beforeEach(async () => {
    slack = await startFakeSlack();
  });
  afterEach(async () => {
    await slack.close();
  });

  it('caches members for a short time, looks again after it, and never caches a failure', async () => {
    const client = new webApi.WebClient('xoxb-test', { slackApiUrl: slack.url, retryConfig: { retries: 0 } });
    let now = 0;
    const directory = createUserGroupDirectory(
      { forTeam: () => client },
      { now: () => now },
      silentLogger,
      60_000,
    );
    let members = ['U7'];
    slack.setResponse('usergroups.users.list', () => slackReply.ok({ users: members }));
    expect([...(await directory.members('S1', 'T1'))]).toEqual(['U7']);
    members = ['U8'];
    now = 59_999;
    expect([...(await directory.members('S1', 'T1'))]).toEqual(['U7']);
    now = 60_000;
    expect([...(await directory.members('S1', 'T1'))]).toEqual(['U8']);
    expect(slack.callsTo('usergroups.users.list').map((c) => c.params.usergroup)).toEqual(['S1', 'S1']);

    slack.setResponse('usergroups.users.list', () => slackReply.error('no_such_subteam'));
    expect([...(await directory.members('S2', 'T1'))]).toEqual([]);
    slack.setResponse('usergroups.users.list', () => slackReply.ok({ users: ['U9'] }));
    expect([...(await directory.members('S2', 'T1'))]).toEqual(['U9']);
  });
});

describe('reminders', () => {
  it('a reminder mentions who may decide and leaves out the requester when self-approval is off', () => {
    const rule = { ...request.rule, approvers: ['admins', 'requester', 'U1', 'U5', 'S3'] };
    expect(reminderText({ ...request, rule }, ['U1', 'U2'])).toBe(
      ':bell: Reminder: the request to run `delete_note` (ID `apr_0123456789abcdef01234567`) is still waiting for a decision. It can be decided by <@U2>, <@U5>, <!subteam^S3>.',
    );
    const open = { ...rule, approvers: ['conversation', 'requester'], allowSelfApproval: true };
    expect(reminderText({ ...request, rule: open }, [])).toContain(
      'It can be decided by anyone in this conversation, <@U1>.',
    );
    const escalated = { ...request.rule, approvers: ['U5'], escalateTo: ['S0ONCALL'], escalateAfterMs: 1000 };
    expect(reminderText({ ...request, rule: escalated }, [])).toContain('It can be decided by <@U5>.');
    expect(reminderText({ ...request, rule: { ...escalated, escalatedAt: 5 } }, [])).toContain(
      'It can be decided by <@U5>, <!subteam^S0ONCALL>.',
    );
  });
});
