import { withDotEnv } from '../config.js';
import { describeError } from '../errors.js';
import { runAuditCli } from './audit-cli.js';
import { stopQuietlyWhenReaderCloses } from './standard-output.js';

/** `npm run audit -- verify|list|export ...`: see `npm run audit -- help`. */
stopQuietlyWhenReaderCloses();
runAuditCli(process.argv.slice(2), withDotEnv(process.env), {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  now: () => Date.now(),
}).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`The audit command failed: ${describeError(error)}\n`);
    process.exitCode = 2;
  },
);
