import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/**
 * Who this process is, as written in the leases it holds: `host:pid:random`. The random part tells a restarted
 * process from its earlier self when the pid comes back (pid 1 in a container).
 */
export function processOwnerId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
}

/**
 * True when `owner` is certainly gone: a process of this host that no longer runs, or an earlier life of this
 * very process. Its leases need not be waited out. Owners on other hosts are never judged: their leases expire.
 */
export function ownerIsGone(owner: string, self: string): boolean {
  const [host, pidText] = owner.split(':');
  const [myHost, myPid] = self.split(':');
  if (host !== myHost || owner === self) return false;
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  if (String(pid) === myPid) return true;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    // EPERM: the pid runs, as another user's process; only ESRCH says nobody has it.
    return error instanceof Error && 'code' in error && error.code === 'ESRCH';
  }
}
