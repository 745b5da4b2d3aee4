import { z } from 'zod';
import { defineTool } from '../agent/tool.js';
import type { Clock } from '../clock.js';
import { AppError } from '../errors.js';

export function createGetCurrentTimeTool(clock: Clock) {
  return defineTool({
    name: 'get_current_time',
    description: 'Returns the current date and time in an IANA time zone such as Europe/Paris or UTC.',
    parameters: z.object({
      timeZone: z.string().describe('IANA time zone name, e.g. "America/New_York" or "UTC"'),
    }),
    needsApproval: false,
    execute: ({ timeZone }) => {
      let formatter: Intl.DateTimeFormat;
      try {
        formatter = new Intl.DateTimeFormat('en-GB', { timeZone, dateStyle: 'full', timeStyle: 'long' });
      } catch {
        throw new AppError(
          'tool.invalid_argument',
          `Unknown time zone "${timeZone}"; use an IANA name such as Europe/Paris or UTC.`,
        );
      }
      return `${formatter.format(new Date(clock.now()))} (${timeZone})`;
    },
  });
}
