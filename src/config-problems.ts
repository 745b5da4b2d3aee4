import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';

/**
 * What the calling program needs: the bot needs Slack credentials, the terminal chat does not, and the audit
 * command line needs neither Slack nor the model (only the database).
 */
export type ConfigPurpose = 'bot' | 'chat' | 'audit';

type Settings = Record<string, string | undefined>;

/** The problems no single variable's schema sees: example values left in, settings required together. */
export function settingProblems(env: Settings, purpose: ConfigPurpose): string[] {
  return [...placeholders(env), ...missingSettings(env, purpose)];
}

/**
 * The example values of .env.example. A copy that was not filled in is refused here, by name, instead of
 * failing later at Slack or at the model with a message that does not say which setting is wrong.
 */
const PLACEHOLDERS: Record<string, { value: string; fix: string }> = {
  SLACK_BOT_TOKEN: {
    value: 'xoxb-your-bot-token',
    fix: 'put the Bot User OAuth Token here (Slack app settings → OAuth & Permissions)',
  },
  SLACK_APP_TOKEN: {
    value: 'xapp-your-app-level-token',
    fix: 'put the app-level token here (Basic Information → App-Level Tokens), or leave it empty for HTTP mode',
  },
  OPENAI_API_KEY: {
    value: 'sk-your-key',
    fix: 'put your API key here, or leave it empty when OPENAI_BASE_URL points at a server that needs none',
  },
};

function placeholders(env: Settings): string[] {
  return Object.entries(PLACEHOLDERS)
    .filter(([name, placeholder]) => env[name]?.trim() === placeholder.value)
    .map(
      ([name, placeholder]) =>
        `${name}: still the example value "${placeholder.value}" from .env.example; ${placeholder.fix}`,
    );
}

/** Settings that are optional one by one but required together, by what the program is for. */
function missingSettings(env: Settings, purpose: ConfigPurpose): string[] {
  const problems: string[] = [];
  if (purpose === 'bot') {
    problems.push(...slackTokenProblems(env));
    if (!env.SLACK_APP_TOKEN && !env.SLACK_SIGNING_SECRET) {
      problems.push(
        'SLACK_SIGNING_SECRET: required in HTTP mode (Basic Information → Signing Secret); or set SLACK_APP_TOKEN for Socket Mode',
      );
    }
  }
  if (env.AUDIT_WEBHOOK_URL && !env.AUDIT_WEBHOOK_SECRET) {
    problems.push(
      'AUDIT_WEBHOOK_SECRET: required with AUDIT_WEBHOOK_URL (the receiver checks signatures with it)',
    );
  }
  if (env.AUDIT_WEBHOOK_SECRET && !env.AUDIT_WEBHOOK_URL) {
    problems.push('AUDIT_WEBHOOK_URL: required with AUDIT_WEBHOOK_SECRET (where to push the audit events)');
  }
  if (Boolean(env.SLACK_CLIENT_ID) !== Boolean(env.SLACK_CLIENT_SECRET)) {
    problems.push(
      env.SLACK_CLIENT_ID
        ? 'SLACK_CLIENT_SECRET: required with SLACK_CLIENT_ID (Basic Information → App Credentials)'
        : 'SLACK_CLIENT_ID: required with SLACK_CLIENT_SECRET (Basic Information → App Credentials)',
    );
  }
  if (env.AUDIT_CHECKPOINT_CHANNEL && !env.AUDIT_SIGNING_KEY) {
    problems.push('AUDIT_SIGNING_KEY: required with AUDIT_CHECKPOINT_CHANNEL (checkpoints are signed)');
  }
  if (
    env.AUDIT_CHECKPOINT_CHANNEL &&
    env.SLACK_STATE_SECRET &&
    !env.SLACK_BOT_TOKEN &&
    !env.AUDIT_CHECKPOINT_CHANNEL.startsWith('T')
  ) {
    problems.push(
      `AUDIT_CHECKPOINT_CHANNEL: installed into several workspaces, name the channel's workspace too: T012AB:${env.AUDIT_CHECKPOINT_CHANNEL} (its team ID, a colon, the channel ID)`,
    );
  }
  if (purpose === 'bot' && env.AUDIT_SIGNING_KEY) {
    const problem = signingKeyProblem(env.AUDIT_SIGNING_KEY);
    if (problem) problems.push(`AUDIT_SIGNING_KEY: ${problem}`);
  }
  if (purpose !== 'audit' && !env.OPENAI_API_KEY && !env.OPENAI_BASE_URL) {
    problems.push('OPENAI_API_KEY: required unless OPENAI_BASE_URL points at an OpenAI-compatible server');
  }
  return problems;
}

/**
 * One bot token (SLACK_BOT_TOKEN), or installs into several workspaces (OAuth: the app's client ID and secret,
 * a state secret and the key that encrypts the stored tokens), never both: a half-configured OAuth names
 * every setting it still needs.
 */
function slackTokenProblems(env: Settings): string[] {
  if (env.SLACK_BOT_TOKEN) {
    return env.SLACK_STATE_SECRET
      ? [
          'SLACK_STATE_SECRET: set only to install into several workspaces, where SLACK_BOT_TOKEN stays unset (docs/installing.md): unset one of the two',
        ]
      : [];
  }
  const oauth = ['SLACK_CLIENT_ID', 'SLACK_CLIENT_SECRET', 'SLACK_STATE_SECRET', 'TOKEN_ENCRYPTION_KEY'];
  if (!env.SLACK_STATE_SECRET && !env.TOKEN_ENCRYPTION_KEY)
    return ['SLACK_BOT_TOKEN: required (xoxb-…, Slack app settings → OAuth & Permissions)'];
  const problems = oauth
    .filter((name) => !env[name])
    .map((name) => `${name}: required to install into several workspaces (${OAUTH_SETTINGS[name]})`);
  // Admins and auditors named once would be admins of every workspace: each workspace names its own instead.
  for (const name of ['ADMIN_USER_IDS', 'AUDITOR_USER_IDS'])
    if (env[name]?.trim())
      problems.push(
        `${name}: applies to a single bot token; installed into several workspaces, each workspace's admins are its installer and those they add with /approvals admins add (docs/installing.md): unset ${name}`,
      );
  if (env.TOKEN_ENCRYPTION_KEY && env.TOKEN_ENCRYPTION_KEY === env.TOKEN_ENCRYPTION_KEY_PREVIOUS)
    problems.push(
      'TOKEN_ENCRYPTION_KEY_PREVIOUS: the same key as TOKEN_ENCRYPTION_KEY; unset it, or put the old key there',
    );
  return problems;
}

/** Where each setting of an install into several workspaces comes from. */
const OAUTH_SETTINGS: Record<string, string> = {
  SLACK_CLIENT_ID: 'Basic Information → App Credentials → Client ID',
  SLACK_CLIENT_SECRET: 'Basic Information → App Credentials → Client Secret',
  SLACK_STATE_SECRET:
    'a random secret of 32 characters or more that signs each install: openssl rand -hex 32',
  TOKEN_ENCRYPTION_KEY: 'encrypts the stored tokens: 32 bytes in base64, openssl rand -base64 32',
};

/** Why the file cannot sign checkpoints, or undefined when it holds an Ed25519 private key. */
function signingKeyProblem(file: string): string | undefined {
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch {
    return `cannot read ${file} (a file with an Ed25519 private key in PEM)`;
  }
  try {
    const key = createPrivateKey(pem);
    return key.asymmetricKeyType === 'ed25519'
      ? undefined
      : `${file} holds a ${key.asymmetricKeyType ?? 'non-asymmetric'} key; an Ed25519 key is needed (openssl genpkey -algorithm ed25519)`;
  } catch {
    return `${file} is not a private key in PEM (create one with openssl genpkey -algorithm ed25519)`;
  }
}
