import { describe, expect, it } from 'vitest';
import { adminsFrom, adminsToList } from '../../src/approvals/team-admins.js';

const installedBy = (workspace: string | undefined, organisation?: string) => ({ workspace, organisation });

describe("a workspace's admins", () => {
  it('are its list once changed, else its installer, else nobody', () => {
    expect(adminsFrom(['U2', 'U3'], installedBy('U1'))).toEqual(['U2', 'U3']);
    expect(adminsFrom([], installedBy('U1'))).toEqual(['U1']);
    expect(adminsFrom([], installedBy(undefined))).toEqual([]);
  });

  it("on Enterprise Grid, the organisation's installer when the workspace has no install of its own", () => {
    expect(adminsFrom([], installedBy(undefined, 'WORG'))).toEqual(['WORG']);
    // A workspace installed on its own keeps its own installer first.
    expect(adminsFrom([], installedBy('U1', 'WORG'))).toEqual(['U1']);
    // Once the workspace lists its admins, the list alone counts.
    expect(adminsFrom(['U2'], installedBy(undefined, 'WORG'))).toEqual(['U2']);
  });

  it('a first change writes the installer into the list; later changes write nobody else', () => {
    expect(adminsToList([], ['U1'])).toEqual(['U1']);
    expect(adminsToList(['U1'], ['U1'])).toEqual([]);
  });
});
