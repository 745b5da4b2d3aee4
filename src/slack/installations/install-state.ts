import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { InstallURLOptions, StateStore } from '@slack/bolt';
import { z } from 'zod';

/** How long an install may take between `/slack/install` and Slack's redirect back (Bolt's default). */
export const INSTALL_STATE_LIFE_MS = 10 * 60_000;

/** Refused states carry Bolt's own code, so its callback reports them as what they are. */
class InvalidInstallState extends Error {
  readonly code = 'slack_oauth_invalid_state';
  constructor(readonly reason: 'forged' | 'expired' | 'used') {
    super(`The install's state is ${reason}.`);
  }
}

const payload = z.object({
  nonce: z.string().min(16),
  issuedAt: z.number(),
  options: z.looseObject({ scopes: z.union([z.string(), z.array(z.string())]) }),
});

/**
 * Bolt's `StateStore` for installs: a state is `<payload>.<HMAC-SHA256 with SLACK_STATE_SECRET>`, good for
 * ten minutes and once: `useOnce` records its nonce (in the database, so a state used on one process is used
 * for all) and answers false when it was used already.
 */
export function createInstallStateStore(
  secret: string,
  useOnce: (nonce: string) => Promise<boolean>,
): StateStore {
  const sign = (body: string) => createHmac('sha256', secret).update(body).digest('base64url');
  return {
    async generateStateParam(options: InstallURLOptions, now: Date) {
      const body = Buffer.from(
        JSON.stringify({ nonce: randomBytes(18).toString('base64url'), issuedAt: now.getTime(), options }),
      ).toString('base64url');
      return `${body}.${sign(body)}`;
    },
    async verifyStateParam(now: Date, state: string) {
      const [body = '', signature = ''] = state.split('.');
      const expected = Buffer.from(sign(body));
      const given = Buffer.from(signature);
      if (given.length !== expected.length || !timingSafeEqual(given, expected))
        throw new InvalidInstallState('forged');
      const parsed = payload.safeParse(JSON.parse(Buffer.from(body, 'base64url').toString('utf8')));
      if (!parsed.success) throw new InvalidInstallState('forged');
      const age = now.getTime() - parsed.data.issuedAt;
      if (age < 0 || age > INSTALL_STATE_LIFE_MS) throw new InvalidInstallState('expired');
      if (!(await useOnce(parsed.data.nonce))) throw new InvalidInstallState('used');
      return { ...parsed.data.options, scopes: parsed.data.options.scopes };
    },
  };
}

/** Why a state was refused, when it was one of ours. */
export function refusedStateReason(error: unknown): 'forged' | 'expired' | 'used' | undefined {
  return error instanceof InvalidInstallState ? error.reason : undefined;
}
