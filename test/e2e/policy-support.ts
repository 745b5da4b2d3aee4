import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { BotOverrides } from '../../src/compose/bot.js';
import type { SlackCall } from '../support/fake-slack.js';
import type { DatabaseKind } from '../support/test-database.js';
import { type DatabaseTarget, rows } from './db-rows.js';
import { type Harness, startHarness } from './harness.js';

/** A clock tests move by hand; the bot's deadlines and card times follow it. */
export class FakeClock {
  t = Date.UTC(2026, 0, 5, 9, 0, 0);
  now = (): number => this.t;
  advance(ms: number): void {
    this.t += ms;
  }
}

export const HOUR = 3_600_000;

/** Writes `policy` to a fresh file and returns its path. */
export function writePolicy(policy: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), 'policy-')), 'policy.json');
  writeFileSync(file, JSON.stringify(policy, null, 2));
  return file;
}

/**
 * A harness whose bot reads `policy` from APPROVAL_POLICY_FILE; deadlines are checked only when asked. Closing
 * it removes the policy file too.
 */
export async function startPolicyHarness(
  policy: unknown,
  options: {
    env?: Record<string, string>;
    overrides?: BotOverrides;
    dbPath?: string;
    kind?: DatabaseKind;
  } = {},
): Promise<Harness> {
  const file = writePolicy(policy);
  const harness = await startHarness({
    env: { APPROVAL_POLICY_FILE: file, ADMIN_USER_IDS: 'UADMIN', ...options.env },
    overrides: { schedulerIntervalMs: 24 * HOUR, ...options.overrides },
    ...(options.dbPath ? { dbPath: options.dbPath } : {}),
    ...(options.kind ? { kind: options.kind } : {}),
  });
  const close = harness.close.bind(harness);
  harness.close = async () => {
    await close();
    rmSync(dirname(file), { recursive: true, force: true });
  };
  return harness;
}

/** Rows of a query on the bot's database (SQL valid on both engines). */
export function query(target: DatabaseTarget, sql: string): Promise<Record<string, unknown>[]> {
  return rows(target, sql);
}

export const blocksText = (call: SlackCall): string => JSON.stringify(call.params.blocks ?? call.params.text);
