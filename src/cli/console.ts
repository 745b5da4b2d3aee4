import { withDotEnv } from '../config.js';
import { runConsoleCli } from './console-cli.js';
import { runCommand } from './standard-output.js';

/** `npm run console -- link --user U… | sessions --revoke-all`: see `npm run console -- help`. */
runCommand('console', (lines) => runConsoleCli(process.argv.slice(2), withDotEnv(process.env), lines));
