import type { DatabaseConfig } from '../config.js';
import { describeError } from '../errors.js';

/** What the operator can check, by what failed: the error's code (Node's or PostgreSQL's) picks the hint. */
const POSTGRES_HINTS: Record<string, string> = {
  ECONNREFUSED: 'nothing answers at that host and port: check that PostgreSQL runs there',
  ENOTFOUND: 'the host name is unknown: check the host in the URL',
  EAI_AGAIN: 'the host name could not be looked up: check the host in the URL and the DNS',
  ETIMEDOUT: 'the server did not answer in time: check the host, the port and any firewall',
  '28P01': 'the server refused the password: check the user name and password in the URL',
  '28000': 'the server refused the user: check the user name in the URL and pg_hba.conf',
  '3D000': 'the database does not exist: create it, or check its name in the URL',
  '42501': 'the user may not create the tables: grant it the rights on the database (or its schema)',
};

/**
 * One sentence naming the setting behind a database that cannot be opened at start-up (`DATABASE_PATH` or
 * `DATABASE_URL`), what failed and what to check, as the configuration and Slack token errors do. Never the
 * password of a PostgreSQL URL, even when the driver's message repeats it.
 */
export function databaseOpenProblem(config: DatabaseConfig, error: unknown): string {
  if (config.kind === 'sqlite') {
    return `DATABASE_PATH=${config.path} cannot be opened (${describeError(error)}): check that its folder exists or can be created, is a folder, and that the bot's user may write to it and to the file.`;
  }
  const where = postgresTarget(config.url);
  const reason = withoutPassword(describeError(error), config.url);
  const hint =
    POSTGRES_HINTS[errorCode(error) ?? ''] ?? 'check the host, port, user, password and database name';
  return `DATABASE_URL (${where}) cannot be used (${reason}): ${hint}.`;
}

/** `PostgreSQL user@host:port/database` from the URL, without its password. */
function postgresTarget(url: string): string {
  try {
    const parsed = new URL(url);
    const user = parsed.username ? `${decodeURIComponent(parsed.username)}@` : '';
    return `PostgreSQL ${user}${parsed.hostname}${parsed.port ? `:${parsed.port}` : ''}${parsed.pathname}`;
  } catch {
    return 'PostgreSQL, a URL that does not parse';
  }
}

function withoutPassword(text: string, url: string): string {
  let password = '';
  try {
    password = decodeURIComponent(new URL(url).password);
  } catch {
    // An unparseable URL: the whole URL is the secret-bearing text to hide.
    return text.split(url).join('(DATABASE_URL)');
  }
  const hidden = text.split(url).join('(DATABASE_URL)');
  return password ? hidden.split(password).join('***') : hidden;
}

function errorCode(error: unknown): string | undefined {
  if (error && typeof error === 'object' && 'code' in error && typeof error.code === 'string')
    return error.code;
  // pg wraps a failed connection to several addresses in an AggregateError: the first one's code.
  if (error instanceof AggregateError) return errorCode(error.errors[0]);
  return undefined;
}
