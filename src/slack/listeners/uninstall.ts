import type { App } from '@slack/bolt';
import { describeError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { RemovalReason, SealedInstallations } from '../installations/installation-store.js';

/**
 * Installs into several workspaces: `app_uninstalled` (the app was removed) and `tokens_revoked` (its bot
 * token was) delete that installation's tokens, audited, so no later call for the workspace uses them; then
 * `removed` ends what waited in the workspaces left without the app (see `workspacesLeft`). Slack sends both
 * without asking Bolt's `authorize` (the token is gone already).
 */
export function registerUninstallListeners(
  app: App,
  deps: {
    installations: Pick<SealedInstallations, 'remove'>;
    removed: (removal: Removal, reason: RemovalReason) => Promise<number>;
    logger: Logger;
  },
): void {
  const { installations, logger } = deps;
  const remove = async (
    context: {
      teamId?: string | undefined;
      enterpriseId?: string | undefined;
      isEnterpriseInstall?: boolean;
    },
    reason: RemovalReason,
  ) => {
    const orgWide = context.isEnterpriseInstall === true;
    const key = orgWide ? { enterpriseId: context.enterpriseId } : { teamId: context.teamId };
    try {
      const removed = await installations.remove(key, reason);
      logger.warn('app removed from a workspace: its tokens are deleted', { ...key, reason, removed });
      const expired = await deps.removed(
        { teamId: context.teamId, enterpriseId: context.enterpriseId, orgWide },
        reason,
      );
      if (expired > 0) logger.warn('pending requests of the removed workspace expired', { ...key, expired });
    } catch (error) {
      logger.error('an uninstall could not be recorded', { ...key, reason, error: describeError(error) });
    }
  };
  app.event('app_uninstalled', async ({ context }) => remove(context, 'app_uninstalled'));
  app.event('tokens_revoked', async ({ event, context }) => {
    // Only the bot's token matters: user tokens (Sign in with Slack) are never kept.
    if ((event.tokens.bot ?? []).length > 0) await remove(context, 'tokens_revoked');
  });
}

/** An installation removed: a workspace's own, or (`orgWide`) its organisation's. */
export interface Removal {
  teamId?: string | undefined;
  enterpriseId?: string | undefined;
  orgWide: boolean;
}
