import { redactText } from './audit/redact.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/**
 * One JSON line per entry on stderr. Fields are flattened to strings with secrets redacted; a value that
 * cannot be serialised (cycles, deep nesting) is replaced instead of throwing, so logging never crashes.
 */
export function createLogger(
  level: LogLevel,
  write: (line: string) => void = (l) => process.stderr.write(l),
): Logger {
  const emit = (entryLevel: LogLevel, message: string, fields?: Record<string, unknown>): void => {
    if (ORDER[entryLevel] < ORDER[level]) return;
    const entry: Record<string, string> = {
      time: new Date().toISOString(),
      level: entryLevel,
      msg: redactText(message),
    };
    for (const [key, value] of Object.entries(fields ?? {})) entry[key] = redactText(safeString(value));
    write(`${JSON.stringify(entry)}\n`);
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
  };
}

function safeString(value: unknown): string {
  if (typeof value === 'string') return value.slice(0, 2000);
  if (value instanceof Error) return `${value.name}: ${value.message}`.slice(0, 2000);
  try {
    return String(JSON.stringify(value)).slice(0, 2000);
  } catch {
    return '[unserialisable]';
  }
}

/** A logger that drops everything; for tests and tools that must stay quiet. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
