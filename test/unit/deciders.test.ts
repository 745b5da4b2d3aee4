import { describe, expect, it } from 'vitest';
import type { ApprovalRecord, ApprovalRule } from '../../src/approvals/approval.js';
import { Deciders } from '../../src/approvals/deciders.js';
import type { Delegation } from '../../src/approvals/delegation.js';
import { builtInPolicy } from '../../src/approvals/policy.js';
import { deciderMentions, nobodyCanDecide } from '../../src/approvals/who-to-tell.js';

const NOW = 1_000_000;
const T1 = { teamId: 'T1', enterpriseId: undefined };
const T2 = { teamId: 'T2', enterpriseId: undefined };
const adminRule = builtInPolicy().forTool('delete_note').rule;

function request(rule: Partial<ApprovalRule> = {}): ApprovalRecord {
  return {
    id: 'apr_0123456789abcdef01234567',
    runId: 'run_1',
    conversationId: 'cnv_1',
    teamId: 'T1',
    turn: 1,
    callId: 'call_1',
    toolName: 'delete_note',
    arguments: '{"id":7}',
    editedArguments: null,
    originApprovalId: null,
    status: 'pending',
    requesterId: 'UREQ',
    rule: { ...adminRule, ...rule },
    decidedBy: null,
    decidedAt: null,
    reason: null,
    channelId: 'CCONV',
    threadTs: '1.000001',
    messageTs: '1.000002',
    result: null,
    expiresAt: null,
    createdAt: NOW - 1000,
  };
}

const delegation = (delegatorId: string, delegateId: string): Delegation => ({
  id: `dlg_${delegatorId}`,
  teamId: 'T1',
  delegatorId,
  delegateId,
  until: NOW + 1000,
  createdAt: NOW - 1000,
});

function deciders(options: { admins?: string[]; delegations?: Delegation[]; votes?: string[] } = {}) {
  return new Deciders({
    clock: { now: () => NOW },
    adminUserIds: options.admins ?? ['UADMIN'],
    groups: { members: async (group) => new Set(group === 'SONCALL' ? ['UGROUP'] : []) },
    delegations: {
      activeFor: async (teamId, delegateId) =>
        (options.delegations ?? []).filter((d) => d.teamId === teamId && d.delegateId === delegateId),
    },
    votes: { approvers: async () => options.votes ?? [] },
  });
}

describe('who may decide', () => {
  it('follows the rule: admins, named users and groups, the conversation from its own channel; never the requester unless allowed', async () => {
    const rule = { approvers: ['admins', 'UNAMED', 'SONCALL', 'conversation'] };
    const d = deciders();
    const may = async (userId: string, channelId?: string) =>
      (await d.right(request(rule), userId, channelId)).permission.ok;
    expect(await may('UADMIN')).toBe(true);
    expect(await may('UNAMED')).toBe(true);
    expect(await may('UGROUP')).toBe(true);
    expect(await may('UMEMBER', 'CCONV')).toBe(true);
    expect(await may('UMEMBER', 'COTHER')).toBe(false);
    expect(await may('UREQ', 'CCONV')).toBe(false);
    expect((await d.right(request(rule), 'UREQ', 'CCONV')).permission).toMatchObject({
      reason: 'self_approval',
    });
  });

  it('lets a delegate decide for someone the rule names, once per delegator, never for the requester', async () => {
    const withDelegation = deciders({ delegations: [delegation('UADMIN', 'UDELEGATE')] });
    const right = await withDelegation.right(request(), 'UDELEGATE', undefined);
    expect(right.permission.ok).toBe(true);
    expect(right.delegation?.delegatorId).toBe('UADMIN');
    const voted = deciders({ delegations: [delegation('UADMIN', 'UDELEGATE')], votes: ['UADMIN'] });
    expect((await voted.right(request(), 'UDELEGATE', undefined)).permission.ok).toBe(false);
    const forRequester = deciders({ delegations: [delegation('UADMIN', 'UREQ')] });
    expect((await forRequester.right(request(), 'UREQ', undefined)).permission.ok).toBe(false);
  });

  it("standing approvals follow the grantor's rights under today's rule", async () => {
    const rule = { ...adminRule, approvers: ['UNAMED'], allowStandingApproval: true };
    const d = deciders();
    expect(await d.mayStillGrant(rule, 'UREQ', 'UNAMED', T1)).toBe(true);
    expect(await d.mayStillGrant({ ...rule, approvers: ['UOTHER'] }, 'UREQ', 'UNAMED', T1)).toBe(false);
    expect(await d.mayStillGrant({ ...rule, quorum: 2 }, 'UREQ', 'UNAMED', T1)).toBe(false);
  });

  it('only people some rule names may delegate', async () => {
    const d = deciders();
    expect(await d.mayDelegate(T1, 'UADMIN', ['admins'])).toBe(true);
    expect(await d.mayDelegate(T1, 'UGROUP', ['SONCALL'])).toBe(true);
    expect(await d.mayDelegate(T1, 'UMEMBER', ['conversation', 'requester', 'SONCALL'])).toBe(false);
  });
});

describe('who may see a request', () => {
  const d = deciders({ delegations: [delegation('UNAMED', 'UDELEGATE')] });
  const approval = request({ approvers: ['UNAMED', 'SONCALL'], approvalChannel: 'CAPPROVALS' });
  const sees = (userId: string, channelId?: string) => d.maySee(approval, { userId, channelId });

  it('its requester, admins, whoever may decide it (through a group or a delegation too), from anywhere', async () => {
    for (const userId of ['UREQ', 'UADMIN', 'UNAMED', 'UGROUP', 'UDELEGATE'])
      expect(await sees(userId, 'CELSEWHERE'), userId).toBe(true);
  });

  it('members of its conversation and of its approval channel; nobody else', async () => {
    expect(await sees('UMEMBER', 'CCONV')).toBe(true);
    expect(await sees('UMEMBER', 'CAPPROVALS')).toBe(true);
    expect(await sees('UMEMBER', 'CELSEWHERE')).toBe(false);
    expect(await sees('UMEMBER')).toBe(false);
  });
});

describe('App Home', () => {
  it('lists what a person may decide without a conversation: as a named user, a group member, an admin or a delegate', async () => {
    const d = deciders({ delegations: [delegation('UNAMED', 'UDELEGATE')] });
    const pending = [
      { ...request({ approvers: ['UNAMED'] }), id: 'apr_named' },
      { ...request({ approvers: ['SONCALL'] }), id: 'apr_group' },
      { ...request({ approvers: ['conversation'] }), id: 'apr_conversation' },
      { ...request({ approvers: ['admins'] }), id: 'apr_admins' },
    ];
    const ids = async (userId: string) => [...(await d.decidableFromHome(pending, userId, T1))];
    expect(await ids('UNAMED')).toEqual(['apr_named']);
    expect(await ids('UGROUP')).toEqual(['apr_group']);
    expect(await ids('UADMIN')).toEqual(['apr_admins']);
    expect(await ids('UDELEGATE')).toEqual(['apr_named']);
    expect(await ids('UREQ')).toEqual([]);
  });
});

describe('who is told', () => {
  it('direct copies go to named users, group members and admins, never the requester', async () => {
    const d = deciders({ admins: ['UADMIN', 'UREQ'] });
    const approval = request({ approvers: ['admins', 'SONCALL', 'UNAMED', 'conversation'] });
    expect(await d.peopleToTell(approval)).toEqual(['UADMIN', 'UGROUP', 'UNAMED']);
    expect(await d.peopleToTell(approval, ['UESCALATED'])).toEqual(['UESCALATED']);
  });

  it('a rule that only admins may decide, with no admins configured, is decided by nobody', () => {
    const rule = request().rule;
    expect(nobodyCanDecide(rule, 'UREQ', [])).toBe(true);
    expect(nobodyCanDecide(rule, 'UREQ', ['UREQ'])).toBe(true);
    expect(nobodyCanDecide(rule, 'UREQ', ['UADMIN'])).toBe(false);
    expect(deciderMentions(rule, 'UREQ', [])).toEqual([{ kind: 'admins' }]);
    const escalated = { ...rule, escalateTo: ['SONCALL'], escalateAfterMs: 1000, escalatedAt: NOW };
    expect(nobodyCanDecide(escalated, 'UREQ', [])).toBe(false);
    expect(nobodyCanDecide({ ...rule, approvers: ['conversation'] }, 'UREQ', [])).toBe(false);
  });
});

describe('admins are per workspace', () => {
  const perTeam = new Deciders({
    clock: { now: () => NOW },
    admins: { adminsOf: async (teamId) => (teamId === 'T1' ? ['UADMIN1'] : ['UADMIN2']) },
  });
  const inT2 = { ...request(), teamId: 'T2' };

  it("an admin of one workspace decides, reads and breaks glass on that workspace's requests only", async () => {
    expect((await perTeam.right(request(), 'UADMIN1', undefined)).permission.ok).toBe(true);
    expect((await perTeam.right(inT2, 'UADMIN1', undefined)).permission.ok).toBe(false);
    expect((await perTeam.right(inT2, 'UADMIN2', undefined)).permission.ok).toBe(true);
    expect(await perTeam.maySee(inT2, { userId: 'UADMIN1', channelId: undefined })).toBe(false);
    expect((await perTeam.breakGlass(inT2, 'UADMIN1')).ok).toBe(false);
    expect(await perTeam.isAuditor(T2, 'UADMIN1')).toBe(false);
    expect(await perTeam.peopleToTell(inT2)).toEqual(['UADMIN2']);
    expect(await perTeam.breakGlassReviewers({ ...inT2, breakGlass: undefined })).toEqual(['UADMIN2']);
  });

  it("a user group named by a rule is read in the request's workspace, beside that workspace's admins", async () => {
    const asked: string[] = [];
    const d = new Deciders({
      clock: { now: () => NOW },
      admins: { adminsOf: async (teamId) => (teamId === 'T1' ? ['UADMIN1'] : ['UADMIN2']) },
      // The same group ID names different people in each workspace.
      groups: {
        members: async (group, teamId) => {
          asked.push(`${teamId}:${group}`);
          return new Set(teamId === 'T2' ? ['UONCALL2'] : ['UONCALL1']);
        },
      },
    });
    const rule = { approvers: ['admins', 'SONCALL'] };
    const inT2 = { ...request(rule), teamId: 'T2' };
    expect((await d.right(inT2, 'UONCALL2', undefined)).permission.ok).toBe(true);
    expect((await d.right(inT2, 'UONCALL1', undefined)).permission.ok).toBe(false);
    expect(await d.peopleToTell(inT2)).toEqual(['UADMIN2', 'UONCALL2']);
    expect(await d.mayDelegate(T2, 'UONCALL2', ['SONCALL'])).toBe(true);
    expect(await d.mayDelegate(T2, 'UONCALL1', ['SONCALL'])).toBe(false);
    expect(asked.every((key) => key === 'T2:SONCALL')).toBe(true);
  });

  it("App Home offers a person only their own workspace's requests, whatever list it is handed", async () => {
    const both = [request(), { ...inT2, id: 'apr_t2' }];
    expect([...(await perTeam.decidableFromHome(both, 'UADMIN1', T1))]).toEqual([request().id]);
    expect([...(await perTeam.decidableFromHome(both, 'UADMIN1', T2))]).toEqual([]);
  });
});
