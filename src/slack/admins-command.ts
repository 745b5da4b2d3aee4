import type {
  AdminChangeResult,
  AdminDirectory,
  TeamAdminStore,
  Workspace,
} from '../approvals/team-admins.js';
import type { SlackMessage } from './blocks/approval-card.js';

export interface AdminsCommandDeps {
  /** Each workspace's admins, as every rule reads them. */
  admins: AdminDirectory;
  /** Installed into several workspaces: each workspace's own list; undefined with one bot token (ADMIN_USER_IDS). */
  store: Pick<TeamAdminStore, 'change'> | undefined;
  now(): number;
}

export interface AdminsCommand {
  change?: { action: 'add' | 'remove'; userId: string } | undefined;
}

const plain = (text: string): SlackMessage => ({
  text,
  blocks: [{ type: 'section', block_id: 'admins', text: { type: 'mrkdwn', text } }],
});

const list = (admins: readonly string[]) =>
  admins.length > 0 ? admins.map((id) => `<@${id}>`).join(', ') : 'nobody';

/**
 * `/approvals admins [add|remove @user]`: the workspace's admins, listed to those with audit rights (the caller
 * checked), changed by one of them. With one bot token the list is ADMIN_USER_IDS and changes nothing.
 */
export async function answerAdminsCommand(
  deps: AdminsCommandDeps,
  command: AdminsCommand,
  who: Workspace & { userId: string; isAdmin: boolean },
): Promise<SlackMessage> {
  const current = await deps.admins.adminsOf(who.teamId, who.enterpriseId);
  if (!command.change) return plain(`*Admins of this workspace:* ${list(current)}`);
  if (!deps.store)
    return plain('Admins are set by ADMIN_USER_IDS for this bot; change them in its settings.');
  if (!who.isAdmin) return plain('Only an admin of this workspace can change its admins.');
  const { action, userId } = command.change;
  const result = await deps.store.change({
    teamId: who.teamId,
    enterpriseId: who.enterpriseId,
    userId,
    action,
    by: who.userId,
    at: deps.now(),
  });
  return plain(changeText(result, action, userId));
}

function changeText(result: AdminChangeResult, action: 'add' | 'remove', userId: string): string {
  if (result.ok)
    return `${action === 'add' ? 'Added' : 'Removed'} <@${userId}>. *Admins of this workspace:* ${list(result.admins)}`;
  switch (result.reason) {
    case 'already_admin':
      return `<@${userId}> is already an admin of this workspace.`;
    case 'not_admin':
      return `<@${userId}> is not an admin of this workspace.`;
    case 'last_admin':
      return `<@${userId}> is the last admin of this workspace; add another admin first.`;
  }
}
