import { withDotEnv } from '../config.js';
import { describeError } from '../errors.js';
import { runConsoleCli } from './console-cli.js';

/** `npm run console -- link --user U… | sessions --revoke-all`: see `npm run console -- help`. */
runConsoleCli(process.argv.slice(2), withDotEnv(process.env), {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
}).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`The console command failed: ${describeError(error)}\n`);
    process.exitCode = 2;
  },
);
