import { createPublicKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { checkCheckpoints, describeCheckpointProblem, keyId } from '../audit/checkpoint.js';
import { type ChainVerdict, verifyChain } from '../audit/verify-chain.js';
import { createAuditQueryStore } from '../db/audit-query-store.js';
import { createCheckpointStore } from '../db/checkpoint-store.js';
import type { SqlDatabase } from '../db/sql/sql-database.js';
import { argumentProblem } from './argument-problem.js';
import { withDatabase } from './audit-database.js';
import type { CliIo } from './audit-io.js';

/** Prints what `verify` found in the chain: its head when intact, else the first broken event. */
export function tellVerdict(verdict: ChainVerdict, io: CliIo): void {
  if (verdict.ok) io.out(`${verdict.count} events, chain intact (head ${verdict.headHash})`);
  else io.err(`Chain broken at event ${verdict.seq} (${verdict.count} events read): ${verdict.message}`);
}

/** `verify --public-key FILE`: the chain, then every signed checkpoint against it. */
export async function runVerifyWithKey(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  io: CliIo,
  seeHelp: string,
): Promise<number> {
  const key = readPublicKey(argv);
  if (!key.ok) {
    io.err(`${key.message}\n${seeHelp}`);
    return 2;
  }
  return withDatabase(env, io, (db) => verifyWithCheckpoints(db, key.key, io));
}

function readPublicKey(
  argv: readonly string[],
): { ok: true; key: KeyObject } | { ok: false; message: string } {
  let file: string | undefined;
  try {
    const parsed = parseArgs({ args: argv.slice(1), options: { 'public-key': { type: 'string' } } });
    file = parsed.values['public-key'];
  } catch (error) {
    return { ok: false, message: argumentProblem(error) };
  }
  if (!file) return { ok: false, message: '--public-key needs a file' };
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch {
    return { ok: false, message: `Cannot read the public key ${file}` };
  }
  try {
    const key = createPublicKey(pem);
    if (key.asymmetricKeyType !== 'ed25519') {
      return {
        ok: false,
        message: `${file} holds a ${key.asymmetricKeyType} key; checkpoints are signed with Ed25519`,
      };
    }
    return { ok: true, key };
  } catch {
    return {
      ok: false,
      message: `${file} is not a public key in PEM (openssl pkey -in private.pem -pubout)`,
    };
  }
}

/** The chain, then every checkpoint against it; exit 1 when either fails. */
async function verifyWithCheckpoints(db: SqlDatabase, publicKey: KeyObject, io: CliIo): Promise<number> {
  const chain = await createAuditQueryStore(db).chain();
  const verdict = verifyChain(chain);
  tellVerdict(verdict, io);
  const checkpoints = await createCheckpointStore(db).all();
  const report = checkCheckpoints(
    new Map(chain.map((event) => [event.seq, event.hash])),
    chain.at(-1)?.seq ?? 0,
    checkpoints,
    publicKey,
  );
  for (const problem of report.problems) io.err(describeCheckpointProblem(problem));
  if (report.checked === 0) {
    io.out('No signed checkpoints: the bot signs them when AUDIT_SIGNING_KEY is set.');
  } else if (report.problems.length === 0) {
    const latest = report.latest;
    io.out(
      `${report.checked} checkpoint${report.checked === 1 ? '' : 's'} verified (key ${keyId(publicKey)})${
        latest ? `; the latest certifies event ${latest.seq} (${new Date(latest.at).toISOString()})` : ''
      }; ${report.uncovered} event${report.uncovered === 1 ? '' : 's'} after it not yet covered`,
    );
  }
  return verdict.ok && report.problems.length === 0 ? 0 : 1;
}
