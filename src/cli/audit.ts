import { withDotEnv } from '../config.js';
import { runAuditCli } from './audit-cli.js';
import { runCommand } from './standard-output.js';

/** `npm run audit -- verify|list|export ...`: see `npm run audit -- help`. */
runCommand('audit', (lines) =>
  runAuditCli(process.argv.slice(2), withDotEnv(process.env), { ...lines, now: () => Date.now() }),
);
