import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/** What opening a sealed value gives: the text, or why it cannot be read (never a guess). */
export type Opened =
  | {
      ok: true;
      text: string /** Sealed with the previous key: `rotate-token-key` rewrites it. */;
      stale: boolean;
    }
  | { ok: false; reason: 'malformed' | 'unknown_key' | 'tampered' };

/** Seals and opens secrets at rest (the stored Slack tokens). */
export interface TokenCipher {
  /** The ID of the key new values are sealed with. */
  readonly currentKeyId: string;
  /** `text` encrypted with the current key; `context` (what the value belongs to) must match when opened. */
  seal(text: string, context: string): string;
  open(sealed: string, context: string): Opened;
}

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * AES-256-GCM with a random 12-byte IV per value. A sealed value reads `v1:<key id>:<iv>:<ciphertext+tag>`
 * (base64url), so the key it needs is named with it: during a rotation `previous` still opens what it sealed.
 * `context` is authenticated with the value, so a value copied onto another row does not open there. A key's
 * ID is the start of its SHA-256, which says which key it is without revealing it.
 */
export function createTokenCipher(keys: { current: Buffer; previous?: Buffer | undefined }): TokenCipher {
  const byId = new Map<string, Buffer>();
  const currentKeyId = keyId(keys.current);
  byId.set(currentKeyId, keys.current);
  if (keys.previous) byId.set(keyId(keys.previous), keys.previous);
  return {
    currentKeyId,
    seal(text, context) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', keys.current, iv);
      cipher.setAAD(Buffer.from(context));
      const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return [VERSION, currentKeyId, iv.toString('base64url'), body.toString('base64url')].join(':');
    },
    open(sealed, context) {
      const [version, id, iv, body, ...rest] = sealed.split(':');
      if (version !== VERSION || !id || !iv || !body || rest.length > 0)
        return { ok: false, reason: 'malformed' };
      const key = byId.get(id);
      if (!key) return { ok: false, reason: 'unknown_key' };
      const ivBytes = Buffer.from(iv, 'base64url');
      const bodyBytes = Buffer.from(body, 'base64url');
      if (ivBytes.length !== IV_BYTES || bodyBytes.length < TAG_BYTES)
        return { ok: false, reason: 'malformed' };
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, ivBytes);
        decipher.setAAD(Buffer.from(context));
        decipher.setAuthTag(bodyBytes.subarray(bodyBytes.length - TAG_BYTES));
        const text = Buffer.concat([
          decipher.update(bodyBytes.subarray(0, bodyBytes.length - TAG_BYTES)),
          decipher.final(),
        ]).toString('utf8');
        return { ok: true, text, stale: id !== currentKeyId };
      } catch {
        return { ok: false, reason: 'tampered' };
      }
    },
  };
}

/** The key ID a sealed value names, without opening it. */
export function sealedKeyId(sealed: string): string | undefined {
  return sealed.split(':')[1];
}

function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 12);
}
