import { withDotEnv } from '../config.js';
import { runPolicyCli } from './policy-cli.js';
import { runCommand } from './standard-output.js';

/** `npm run policy -- check FILE | replay FILE`: see `npm run policy -- help`. */
runCommand('policy', (lines) =>
  runPolicyCli(process.argv.slice(2), { ...lines, now: () => Date.now(), env: withDotEnv(process.env) }),
);
