/**
 * The bot scopes an install asks for: those of manifest.yml (a test keeps the two lists the same), so an app
 * installed through `/slack/install` can do what one installed from its settings can.
 */
export const BOT_SCOPES = [
  'app_mentions:read',
  'channels:history',
  'groups:history',
  'im:history',
  'mpim:history',
  'chat:write',
  'commands',
  'users:read',
  'usergroups:read',
  'channels:read',
  'groups:read',
  'mpim:read',
  'assistant:write',
  'reactions:write',
] as const;
