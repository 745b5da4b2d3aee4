/**
 * Without a public URL (CONSOLE_URL) the console answers only on this machine, for the one-time link: whether a
 * request from `address` is kept out (it is answered as if there were no console).
 */
export function outOfConsoleReach(publicUrl: string | undefined, address: string | undefined): boolean {
  return publicUrl === undefined && !isLoopback(address);
}

function isLoopback(address: string | undefined): boolean {
  return address === '127.0.0.1' || address === '::1' || address === '::ffff:127.0.0.1';
}
