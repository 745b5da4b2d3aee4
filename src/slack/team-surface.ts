import type { webApi } from '@slack/bolt';
import type { SlackClients } from './installations/team-clients.js';
import type { ClientSurface, SlackSurface } from './slack-surface.js';

/**
 * The Slack surface that speaks in each workspace with that workspace's client: every call picks the client of
 * the team its thread, request or target belongs to (one surface per client, built once). With a single
 * token there is one client, hence one surface, as before.
 */
export function createTeamSurface(
  clients: SlackClients,
  build: (client: webApi.WebClient, team: { teamId?: string; enterpriseId?: string }) => ClientSurface,
): ClientSurface {
  const built = new Map<webApi.WebClient, ClientSurface>();
  const of = (teamId: string | undefined, enterpriseId?: string | undefined): ClientSurface => {
    const client = clients.forTeam(teamId, enterpriseId);
    let surface = built.get(client);
    if (!surface) {
      surface = build(client, { ...(teamId ? { teamId } : {}), ...(enterpriseId ? { enterpriseId } : {}) });
      built.set(client, surface);
    }
    return surface;
  };
  const surface: ClientSurface = {
    postText: (thread, text) => of(thread.teamId, thread.enterpriseId).postText(thread, text),
    postApprovalCard: (approval) => of(approval.teamId, approval.enterpriseId).postApprovalCard(approval),
    adoptPostedCard: (approval) => of(approval.teamId, approval.enterpriseId).adoptPostedCard(approval),
    postAnswer: (thread, text, delivery) =>
      of(thread.teamId, thread.enterpriseId).postAnswer(thread, text, delivery),
    startProgress: (target) => of(target.teamId, target.enterpriseId).startProgress(target),
    streamAnswer: (target) => of(target.teamId, target.enterpriseId).streamAnswer(target),
    readThread: (thread, options) => of(thread.teamId, thread.enterpriseId).readThread(thread, options),
    updateApprovalCard: (approval, update) =>
      of(approval.teamId, approval.enterpriseId).updateApprovalCard(approval, update),
    postEscalation: (approval) => of(approval.teamId, approval.enterpriseId).postEscalation(approval),
    setSuggestedPrompts: (channel, prompts, title) =>
      of(channel.teamId).setSuggestedPrompts(channel, prompts, title),
    post: (channel, text, options) => of(options.teamId).post(channel, text, options),
    postEphemeral: (channelId, userId, text, threadTs, teamId) =>
      of(teamId).postEphemeral(channelId, userId, text, threadTs),
  } satisfies SlackSurface;
  return surface;
}
