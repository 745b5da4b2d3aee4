import type { ApprovalPolicy } from './policy.js';
import { parsePolicyText, readPolicyFile } from './policy-file.js';

/** A policy file read and validated, with the text it was built from (handed to worker threads as is). */
export type PolicySource =
  | { ok: true; policy: ApprovalPolicy; text: string }
  | { ok: false; problems: string[] };

/**
 * Reads and validates a policy file once: the text is kept, so every thread of the process builds the very
 * policy that was validated, even if the file changes again meanwhile. `knownTools`: as for
 * `loadApprovalPolicy` (`toolNames()` of src/tools/built-in-tools.ts). `fix`: as for `readPolicyFile`.
 */
export function readPolicySource(file: string, knownTools: readonly string[], fix?: string): PolicySource {
  const read = readPolicyFile(file, fix);
  return read.ok ? policyFromText(file, read.text, knownTools) : read;
}

/** The policy a validated text gives (the same checks as at start-up). */
export function policyFromText(file: string, text: string, knownTools: readonly string[]): PolicySource {
  const parsed = parsePolicyText(text, file, knownTools);
  return parsed.ok ? { ok: true, policy: parsed.policy, text } : parsed;
}
