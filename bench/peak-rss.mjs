// Loaded with `--import` into a command the bench runs: at exit, its peak resident set (KiB) on stderr.
import { writeSync } from 'node:fs';

process.on('exit', () => {
  writeSync(2, `\npeak-rss-kib ${process.resourceUsage().maxRSS}\n`);
});
