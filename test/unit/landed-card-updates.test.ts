import { describe, expect, it } from 'vitest';
import { LandedCardUpdates } from '../../src/conversations/landed-card-updates.js';
import type { ShownCardUpdate } from '../../src/conversations/store-ports.js';
import { createLogger } from '../../src/logger.js';
import { waitUntil } from '../support/wait.js';

describe('landed card updates', () => {
  it('are written off together, once their window passes or at a flush, and a failed write never throws', async () => {
    const written: string[][] = [];
    let failing = false;
    const outbox = {
      cardsUpdated: async (shown: readonly ShownCardUpdate[]) => {
        if (failing) throw new Error('database is locked');
        written.push(shown.map((s) => `${s.approvalId}@${s.owedAt}`));
      },
    };
    const logs: string[] = [];
    const landed = new LandedCardUpdates(
      outbox,
      createLogger('warn', (line) => logs.push(line)),
      20,
    );
    landed.landed('apr_1', 1);
    landed.landed('apr_2', 1);
    landed.landed('apr_1', 1);
    landed.landed('apr_1', 2);
    expect(written).toEqual([]);
    await waitUntil(() => written.length > 0);
    expect(written).toEqual([['apr_1@1', 'apr_2@1', 'apr_1@2']]);

    landed.landed('apr_3', 5);
    await landed.flush();
    expect(written).toEqual([['apr_1@1', 'apr_2@1', 'apr_1@2'], ['apr_3@5']]);
    await landed.flush();
    expect(written).toHaveLength(2);

    failing = true;
    landed.landed('apr_4', 1);
    await landed.flush();
    expect(logs.join('\n')).toContain('landed card updates could not be written off');
  });
});
