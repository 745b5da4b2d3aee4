import { withDotEnv } from '../config.js';
import { describeError } from '../errors.js';
import { runPolicyCli } from './policy-cli.js';

/** `npm run policy -- check FILE | replay FILE`: see `npm run policy -- help`. */
runPolicyCli(process.argv.slice(2), {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  now: () => Date.now(),
  env: withDotEnv(process.env),
}).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`The policy command failed: ${describeError(error)}\n`);
    process.exitCode = 2;
  },
);
