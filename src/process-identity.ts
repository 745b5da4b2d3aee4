import { randomBytes } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * Where a process runs, as far as another process can check it is still alive: the kernel's boot and the pid
 * namespace (Linux), empty where the system does not say.
 */
function placeOfThisProcess(): string {
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim().slice(0, 8);
    const namespace = readlinkSync('/proc/self/ns/pid').replace(/\D/g, '');
    return boot && namespace ? `${boot}.${namespace}` : '';
  } catch {
    return '';
  }
}

/**
 * Who this process is, as written in the leases it holds: `host:place:pid:random`. The random part tells a
 * restarted process from its earlier self when the pid comes back (pid 1 in a container).
 */
export function processOwnerId(place = placeOfThisProcess()): string {
  return `${hostname()}:${place}:${process.pid}:${randomBytes(4).toString('hex')}`;
}

/**
 * True only when `owner` is certainly gone, so its leases need not be waited out: a process of this very boot
 * and pid namespace whose pid no longer runs, or an earlier life of this process (same pid, another random
 * part). Anything it cannot check (another host, another container or namespace, a system without /proc, a
 * hostname shared by two machines) counts as alive: its leases expire on their own.
 */
export function ownerIsGone(
  owner: string,
  self: string,
  pidRuns: (pid: number) => boolean = pidIsRunning,
): boolean {
  const [host, place, pidText] = owner.split(':');
  const [myHost, myPlace, myPid] = self.split(':');
  if (owner === self || !place || host !== myHost || place !== myPlace) return false;
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  if (pidText === myPid) return true;
  return !pidRuns(pid);
}

function pidIsRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the pid runs, as another user's process; only ESRCH says nobody has it.
    return !(error instanceof Error && 'code' in error && error.code === 'ESRCH');
  }
}
