// Loaded with `--import` into a command the bench runs: at exit, its peak resident set (KiB) on stderr.
// On Linux the process's own high-water mark (`VmHWM`): `process.resourceUsage().maxRSS` of a child starts at
// its parent's peak (the kernel keeps it across fork and exec), so a large bench process would be counted for it.
import { readFileSync, writeSync } from 'node:fs';

function peakKib() {
  try {
    const hwm = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (hwm) return Number(hwm[1]);
  } catch {
    // Not Linux: the process's own count.
  }
  return process.resourceUsage().maxRSS;
}

process.on('exit', () => {
  writeSync(2, `\npeak-rss-kib ${peakKib()}\n`);
});
