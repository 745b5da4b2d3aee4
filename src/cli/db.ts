import { withDotEnv } from '../config.js';
import { runDbCli } from './db-cli.js';
import { runCommand } from './standard-output.js';

/** `npm run db -- backup --out FILE` and `npm run db -- copy --to postgres://…`: see `npm run db -- help`. */
runCommand('database', (lines) => runDbCli(process.argv.slice(2), withDotEnv(process.env), lines));
