import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { decodeApprovalButtonValue, encodeApprovalButtonValue } from './button-value.js';

/**
 * What a decision modal carries in `private_metadata`: the approval id, who opened the form, and the card it was
 * opened from (its channel decides the policy's "anyone in the conversation"; a submission itself comes from no
 * channel). Slack hands it back inside the submission, so it is signed with a key only the bot knows (derived
 * from the signing secret, or the app token in Socket Mode): a crafted submission cannot name another channel,
 * card or person.
 */
export interface ModalMetadata {
  approvalId: string;
  /** Who opened the form: only they may submit it. */
  userId: string;
  channelId: string | undefined;
  /** The clicked card's ts and thread: where to update it when its ts was never stored. */
  messageTs?: string | undefined;
  threadTs?: string | undefined;
}

const TS = /^\d{1,12}\.\d{1,9}$/;

const metadataSchema = z.object({
  a: z.string(),
  u: z.string().regex(/^[UW][A-Z0-9]{1,30}$/),
  c: z
    .string()
    .regex(/^[CDG][A-Z0-9]{1,30}$/)
    .optional(),
  m: z.string().regex(TS).optional(),
  t: z.string().regex(TS).optional(),
  s: z.string().regex(/^[A-Za-z0-9_-]{43}$/),
});

/** The metadata key: derived, so the secret it comes from is never used as is. */
export function modalMetadataKey(secret: string): Buffer {
  return createHmac('sha256', secret).update('approval-modal-metadata/v1').digest();
}

function signature(key: Buffer, fields: readonly (string | undefined)[]): string {
  return createHmac('sha256', key)
    .update(JSON.stringify(fields.map((f) => f ?? null)))
    .digest('base64url');
}

export function encodeModalMetadata(metadata: ModalMetadata, key: Buffer): string {
  const a = encodeApprovalButtonValue(metadata.approvalId);
  const fields = [a, metadata.userId, metadata.channelId, metadata.messageTs, metadata.threadTs];
  return JSON.stringify({
    a,
    u: metadata.userId,
    ...(metadata.channelId ? { c: metadata.channelId } : {}),
    ...(metadata.messageTs ? { m: metadata.messageTs } : {}),
    ...(metadata.threadTs ? { t: metadata.threadTs } : {}),
    s: signature(key, fields),
  });
}

/** The metadata, when it parses, is signed with `key` and was issued to `submitter`; else undefined. */
export function decodeModalMetadata(
  value: string,
  key: Buffer,
  submitter: string,
): ModalMetadata | undefined {
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    return undefined;
  }
  const parsed = metadataSchema.safeParse(json);
  if (!parsed.success) return undefined;
  const { a, u, c, m, t, s } = parsed.data;
  const expected = Buffer.from(signature(key, [a, u, c, m, t]));
  const given = Buffer.from(s);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
  const id = decodeApprovalButtonValue(a);
  if (!id.ok || u !== submitter) return undefined;
  return { approvalId: id.approvalId, userId: u, channelId: c, messageTs: m, threadTs: t };
}
