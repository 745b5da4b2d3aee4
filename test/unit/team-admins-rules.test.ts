import { describe, expect, it } from 'vitest';
import { adminsFrom, adminsToList } from '../../src/approvals/team-admins.js';

describe("a workspace's admins", () => {
  it('are its list once changed, else its installer, else nobody', () => {
    expect(adminsFrom(['U2', 'U3'], 'U1')).toEqual(['U2', 'U3']);
    expect(adminsFrom([], 'U1')).toEqual(['U1']);
    expect(adminsFrom([], undefined)).toEqual([]);
  });

  it('a first change writes the installer into the list; later changes write nobody else', () => {
    expect(adminsToList([], ['U1'])).toEqual(['U1']);
    expect(adminsToList(['U1'], ['U1'])).toEqual([]);
  });
});
