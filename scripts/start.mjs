// `npm start`: builds dist/ first when src/ changed since the last build (a fresh clone is built by `npm ci`),
// then runs the bot as plain JavaScript, in this one process (so signals reach it directly).
import { build } from './build.mjs';

await build({ ifStale: true });
await import('../dist/main.js');
