import { randomBytes } from 'node:crypto';

/** Makes a new id with a prefix such as `apr` or `run`. */
export type IdGenerator = (prefix: string) => string;

/** Unguessable ids such as `apr_3f9c…`: an approval id in a button must not be forgeable by counting. */
export const randomId: IdGenerator = (prefix) => `${prefix}_${randomBytes(12).toString('hex')}`;
