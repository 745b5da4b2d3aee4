import { withDotEnv } from '../config.js';
import { describeError } from '../errors.js';
import { runDbCli } from './db-cli.js';
import { stopQuietlyWhenReaderCloses } from './standard-output.js';

/** `npm run db -- backup --out FILE` and `npm run db -- copy --to postgres://…`: see `npm run db -- help`. */
stopQuietlyWhenReaderCloses();
runDbCli(process.argv.slice(2), withDotEnv(process.env), {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
}).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`The database command failed: ${describeError(error)}\n`);
    process.exitCode = 2;
  },
);
