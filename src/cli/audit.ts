import { withDotEnv } from '../config.js';
import { describeError } from '../errors.js';
import { runAuditCli } from './audit-cli.js';

/** `npm run audit -- verify|list|export ...`: see `npm run audit -- help`. */
try {
  process.exitCode = runAuditCli(process.argv.slice(2), withDotEnv(process.env), {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    now: () => Date.now(),
  });
} catch (error) {
  process.stderr.write(`The audit command failed: ${describeError(error)}\n`);
  process.exitCode = 2;
}
