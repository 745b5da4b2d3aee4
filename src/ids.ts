import { randomBytes } from 'node:crypto';
import type { IdGenerator } from './agent/ports.js';

/** Unguessable ids such as `apr_3f9c…`: an approval id in a button must not be forgeable by counting. */
export const randomId: IdGenerator = (prefix) => `${prefix}_${randomBytes(12).toString('hex')}`;
