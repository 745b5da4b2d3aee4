import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { ConsoleAccess, LINK_LIFETIME_MS } from '../console/console-access.js';
import { createApprovalStore } from '../db/approval-store.js';
import { createConsoleLinkStore, createConsoleSessionStore } from '../db/console-store.js';
import { describeDatabase, openDatabase } from '../db/open-database.js';
import type { StoreContext } from '../db/store-context.js';
import { describeError } from '../errors.js';
import { randomId } from '../ids.js';
import { createLogger } from '../logger.js';
import { argumentProblem } from './argument-problem.js';

export interface ConsoleCliIo {
  out(line: string): void;
  err(line: string): void;
}

export const CONSOLE_USAGE = `Usage: npm run console -- link --user U0123ABCD [--team T0123ABCD]
       npm run console -- sessions --revoke-all

Commands:
  link       prints a URL that signs this Slack user in to the web console once, within ${LINK_LIFETIME_MS / 60_000} minutes
             (at CONSOLE_URL, else http://127.0.0.1:PORT, which answers on this machine only). The link is
             stored hashed and its issue is recorded in the audit log (console.link_issued).
  sessions   --revoke-all signs everyone out of the console at once (console.sessions_revoked).

Exit codes: 0 done, 2 usage or configuration problem.`;

const USER_ID = /^[UW][A-Z0-9]{2,}$/;
const TEAM_ID = /^[TE][A-Z0-9]{2,}$/;

/** `npm run console`: one-time sign-in links and the revocation of every session. */
export async function runConsoleCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  io: ConsoleCliIo,
): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(args);
  } catch (error) {
    io.err(`${argumentProblem(error)}\nSee npm run console -- --help.`);
    return 2;
  }
  const [command] = parsed.positionals;
  const { values } = parsed;
  if (values.help || command === 'help') {
    io.out(CONSOLE_USAGE);
    return 0;
  }
  if (command === 'link' && !(values.user && USER_ID.test(values.user))) {
    io.err('link needs --user with a Slack user ID such as U0123ABCD.');
    return 2;
  }
  if (command === 'link' && values.team !== undefined && !TEAM_ID.test(values.team)) {
    io.err('--team must be a Slack workspace ID such as T0123ABCD.');
    return 2;
  }
  if (command === 'sessions' && !values['revoke-all']) {
    io.err('sessions needs --revoke-all (the only thing it does).');
    return 2;
  }
  if (command !== 'link' && command !== 'sessions') {
    io.err(`${command ? `Unknown command ${command}.` : 'Name a command.'}\n${CONSOLE_USAGE}`);
    return 2;
  }
  const loaded = loadConfig(env, 'audit');
  if (!loaded.ok) {
    io.err(`Configuration error:\n${loaded.problems.map((p) => `  - ${p}`).join('\n')}`);
    return 2;
  }
  const { config } = loaded;
  if (command === 'link' && values.team === undefined && config.slack.oauth) {
    io.err(
      'Installed into several workspaces: name the workspace with --team T0123ABCD (a session belongs to one workspace).',
    );
    return 2;
  }
  let access: ConsoleAccess;
  let close: () => Promise<void>;
  try {
    const db = await openDatabase(config.database, createLogger('error'));
    close = () => db.close();
    const ctx: StoreContext = {
      db,
      clock: { now: () => Date.now() },
      newId: randomId,
      owner: 'console-cli',
      leaseMs: 30_000,
      ownerIsGone: () => false,
    };
    const audit = createApprovalStore(ctx);
    access = new ConsoleAccess({
      sessions: createConsoleSessionStore(ctx),
      links: createConsoleLinkStore(ctx),
      recordAudit: (events) => audit.recordAudit(events),
      clock: ctx.clock,
    });
  } catch (error) {
    io.err(`Cannot open ${describeDatabase(config.database)}: ${describeError(error)}`);
    return 2;
  }
  try {
    if (command === 'sessions') {
      const revoked = await access.revokeAll();
      io.out(`Signed out ${revoked} console session${revoked === 1 ? '' : 's'}.`);
      return 0;
    }
    const { token, expiresAt } = await access.issueLink(values.user ?? '', values.team);
    const base = config.console.publicUrl ?? `http://127.0.0.1:${config.port}`;
    io.out(`${base}/console/link/${token}`);
    io.out(`Opens a console session for ${values.user} once, until ${new Date(expiresAt).toISOString()}.`);
    return 0;
  } finally {
    await close();
  }
}

function parse(args: string[]) {
  return parseArgs({
    args,
    allowPositionals: true,
    options: {
      user: { type: 'string' },
      team: { type: 'string' },
      'revoke-all': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}
