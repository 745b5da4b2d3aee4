import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { ownerIsGone, processOwnerId } from '../../src/process-identity.js';

describe('who may take over a lease at once', () => {
  const self = `${hostname()}:boot1.4026531836:${process.pid}:aaaa`;
  const none = () => false;
  const all = () => true;

  it('a stopped process of this boot and pid namespace, or an earlier life of this one', () => {
    expect(ownerIsGone(`${hostname()}:boot1.4026531836:999999:bbbb`, self, none)).toBe(true);
    expect(ownerIsGone(`${hostname()}:boot1.4026531836:${process.pid}:bbbb`, self, all)).toBe(true);
  });

  it('never a running process, this process, or anything it cannot check', () => {
    expect(ownerIsGone(`${hostname()}:boot1.4026531836:999999:bbbb`, self, all)).toBe(false);
    expect(ownerIsGone(self, self, none)).toBe(false);
    // Another container or pid namespace on the same host, even with the same pid (pid 1 in each).
    expect(ownerIsGone(`${hostname()}:boot1.4026532000:${process.pid}:bbbb`, self, none)).toBe(false);
    // Another machine that happens to share the hostname.
    expect(ownerIsGone(`${hostname()}:boot2.4026531836:1:bbbb`, self, none)).toBe(false);
    expect(ownerIsGone('elsewhere:boot1.4026531836:1:bbbb', self, none)).toBe(false);
    // A system that does not say where a process runs.
    expect(ownerIsGone(`${hostname()}::1:bbbb`, `${hostname()}::${process.pid}:aaaa`, none)).toBe(false);
  });

  it('this process is judged alive by its own id, with the real pid check', () => {
    const me = processOwnerId('boot1.4026531836');
    expect(ownerIsGone(me.replace(/:[0-9a-f]+$/, ':ffff'), me)).toBe(true);
    expect(ownerIsGone(`${hostname()}:boot1.4026531836:1:ffff`, me)).toBe(false);
  });
});
