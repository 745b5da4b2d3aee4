import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitUntil } from '../support/wait.js';
import { rows } from './db-rows.js';
import { loadTranscripts, type Mode, transcriptHandler } from './dialect-transcripts.js';
import { type Harness, startHarness } from './harness.js';

/**
 * Replays every recorded transcript of a real OpenAI-compatible server in `../shared/model-dialects/` (beside
 * the project in CI and on the team's machines) through the fake model server to the real bot, in each
 * recorded mode, and checks the outcome the transcript expects. Where the folder is missing (a user's clone),
 * one test says so and nothing else runs. `MODEL_DIALECTS_DIR` points it at another folder.
 */
const DIR = resolve(
  process.env.MODEL_DIALECTS_DIR ?? join(import.meta.dirname, '..', '..', '..', 'shared', 'model-dialects'),
);
const FAILURE = /^The model service /;

const present = existsSync(DIR);
const transcripts = present ? loadTranscripts(DIR) : [];
const runs = transcripts.flatMap((t) =>
  (['stream', 'json'] as const).filter((mode) => t[mode]).map((mode) => ({ t, mode })),
);

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** The names of the tools whose calls ran (an output with status ok), in the order the model called them. */
async function toolsRun(harness: Harness): Promise<string[]> {
  const items = await rows(
    harness.database,
    "SELECT kind, data FROM conversation_items WHERE kind IN ('tool_call', 'tool_output') ORDER BY id",
  );
  const parsed = items.map((row) => ({
    kind: String(row.kind),
    data: JSON.parse(String(row.data)) as { callId: string; name: string; status?: string },
  }));
  const ok = new Set(
    parsed.filter((i) => i.kind === 'tool_output' && i.data.status === 'ok').map((i) => i.data.callId),
  );
  return parsed.filter((i) => i.kind === 'tool_call' && ok.has(i.data.callId)).map((i) => i.data.name);
}

/** Whether the conversation's run has ended (completed, failed or cancelled) and the thread got its words. */
async function runEnded(harness: Harness): Promise<boolean> {
  const found = await rows(harness.database, 'SELECT status FROM runs');
  const ended = found.length > 0 && found.every((row) => !['running', 'paused'].includes(String(row.status)));
  return ended && (await rows(harness.database, 'SELECT id FROM deliveries')).length === 0;
}

/** Mentions the bot and approves every card it posts until the run ends; returns the cards and the last text. */
async function converse(harness: Harness): Promise<{ cards: number; last: string | undefined }> {
  await harness.mention('please do what the recording shows');
  let clicked = 0;
  await waitUntil(
    async () => {
      await harness.bot.conversations.idle();
      const cards = harness.cards();
      for (const card of cards.slice(clicked)) await harness.click(card, 'approve', 'U2');
      const none = cards.length === clicked;
      clicked = cards.length;
      return none && (await runEnded(harness));
    },
    { timeoutMs: 15_000, intervalMs: 20, message: 'the run did not end' },
  );
  return { cards: harness.cards().length, last: harness.texts().at(-1) };
}

describe('recorded model servers (../shared/model-dialects)', () => {
  if (!present) {
    it(`did not run: no transcripts at ${DIR} (the folder is beside the project in CI, not in a clone)`, () => {
      console.warn(`model-dialects conformance did not run: ${DIR} is missing`);
      expect(existsSync(DIR)).toBe(false);
    });
    return;
  }

  it('found transcripts to replay', () => {
    expect(runs.length).toBeGreaterThan(0);
  });

  it.each(runs)(
    '$t.name ($mode): $t.server',
    async ({ t, mode }: { t: (typeof transcripts)[number]; mode: Mode }) => {
      const expected = t[mode]?.expect ?? {};
      h = await startHarness({
        env: { OPENAI_STREAM: mode === 'stream' ? 'true' : 'false' },
        modelRetries: 2,
      });
      h.model.setHandler(transcriptHandler(t, mode));
      const { cards, last } = await converse(h);
      const seen = { cards, last, texts: h.texts(), requests: h.model.requests.length };
      if (expected.failure) {
        expect(last, JSON.stringify(seen)).toMatch(FAILURE);
      } else {
        expect(last, JSON.stringify(seen)).not.toMatch(FAILURE);
        expect(
          h.texts().some((text) => FAILURE.test(text)),
          JSON.stringify(seen),
        ).toBe(false);
      }
      if (expected.final !== undefined) expect(last, JSON.stringify(seen)).toContain(expected.final);
      if (expected.cards !== undefined) expect(cards, JSON.stringify(seen)).toBe(expected.cards);
      if (expected.ran !== undefined) expect(await toolsRun(h)).toEqual(expected.ran);
    },
  );
});
