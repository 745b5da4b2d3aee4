import { LogLevel, type Logger as SlackLibraryLogger } from '@slack/web-api';
import type { Logger, LogLevel as OurLevel } from '../logger.js';

const ORDER: Record<LogLevel, number> = {
  [LogLevel.DEBUG]: 10,
  [LogLevel.INFO]: 20,
  [LogLevel.WARN]: 30,
  [LogLevel.ERROR]: 40,
};

const FROM_OURS: Record<OurLevel, LogLevel> = {
  debug: LogLevel.DEBUG,
  info: LogLevel.INFO,
  warn: LogLevel.WARN,
  error: LogLevel.ERROR,
};

/**
 * Lines of Bolt and the Web API client that carry a request's or response's body: Bolt logs each incoming
 * body as JSON at debug level, the Web API client its request bodies, headers and results. Message text,
 * arguments and tokens live there: such a line keeps only its label.
 */
const BODY_LINE = /^(http request (?:body|headers|result)|http response (?:body|headers))\b/i;

/** Longest line kept from the libraries (after redaction, which the bot's logger applies first). */
const MAX_MESSAGE = 500;

function text(parts: readonly unknown[]): string {
  return parts
    .map((part) => {
      if (typeof part === 'string') return part;
      if (part instanceof Error) return `${part.name}: ${part.message}`;
      // Objects are payloads or option bags: never written out.
      return part === null || part === undefined ? String(part) : `[${typeof part}]`;
    })
    .join(' ');
}

/**
 * Bolt's and `@slack/web-api`'s logging, through the bot's logger (one JSON line, secrets redacted) and never
 * with a body: lines that carry one keep only their label, and raw JSON (Bolt's incoming bodies) is dropped.
 */
export function slackLibraryLogger(logger: Logger, level: OurLevel, name = 'slack'): SlackLibraryLogger {
  let current = FROM_OURS[level];
  let source = name;
  const emit = (at: LogLevel, parts: unknown[]) => {
    if (ORDER[at] < ORDER[current]) return;
    let message = text(parts).trim();
    const body = BODY_LINE.exec(message);
    if (body) message = `${body[1]}: (not logged)`;
    else if (/^[[{]/.test(message)) message = '(a request body, not logged)';
    message = message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE)}…` : message;
    const fields = { source };
    if (at === LogLevel.DEBUG) logger.debug(message, fields);
    else if (at === LogLevel.INFO) logger.info(message, fields);
    else if (at === LogLevel.WARN) logger.warn(message, fields);
    else logger.error(message, fields);
  };
  return {
    debug: (...parts: unknown[]) => emit(LogLevel.DEBUG, parts),
    info: (...parts: unknown[]) => emit(LogLevel.INFO, parts),
    warn: (...parts: unknown[]) => emit(LogLevel.WARN, parts),
    error: (...parts: unknown[]) => emit(LogLevel.ERROR, parts),
    setLevel: (next: LogLevel) => {
      current = next;
    },
    getLevel: () => current,
    setName: (next: string) => {
      source = next;
    },
  };
}
