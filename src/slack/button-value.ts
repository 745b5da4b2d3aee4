import { z } from 'zod';

/**
 * The approval id as it appears in a button value. The value is opaque: everything else about the request is
 * read from the database, never from the payload.
 */
const buttonValueSchema = z.string().regex(/^apr_[A-Za-z0-9]{16,40}$/);

export function encodeApprovalButtonValue(approvalId: string): string {
  return buttonValueSchema.parse(approvalId);
}

export type DecodedButtonValue = { ok: true; approvalId: string } | { ok: false };

export function decodeApprovalButtonValue(value: unknown): DecodedButtonValue {
  const parsed = buttonValueSchema.safeParse(value);
  return parsed.success ? { ok: true, approvalId: parsed.data } : { ok: false };
}
