import { readFileSync } from 'node:fs';
import { type ApprovalPolicy, BUILT_IN_TOOL_POLICIES } from './policy.js';
import { parsePolicyText } from './policy-file.js';

/** A policy file read and validated, with the text it was built from (handed to worker threads as is). */
export type PolicySource =
  | { ok: true; policy: ApprovalPolicy; text: string }
  | { ok: false; problems: string[] };

/**
 * Reads and validates a policy file once: the text is kept, so every thread of the process builds the very
 * policy that was validated, even if the file changes again meanwhile.
 */
export function readPolicySource(file: string): PolicySource {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = error instanceof Error && 'code' in error ? String(error.code) : 'unreadable';
    return { ok: false, problems: [`${file}: cannot read the file (${code}); check APPROVAL_POLICY_FILE`] };
  }
  return policyFromText(file, text);
}

/** The policy a validated text gives (the same checks as at start-up). */
export function policyFromText(file: string, text: string): PolicySource {
  const parsed = parsePolicyText(text, file, Object.keys(BUILT_IN_TOOL_POLICIES));
  return parsed.ok ? { ok: true, policy: parsed.policy, text } : parsed;
}
