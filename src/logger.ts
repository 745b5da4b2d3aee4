import { processOutput } from './output-streams.js';
import { redactText } from './redact.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/**
 * One JSON line per entry on stderr (dropped once stderr cannot be written: see output-streams.ts). Fields are flattened to strings with secrets redacted; a value that
 * cannot be serialised (cycles, deep nesting) is replaced instead of throwing, so logging never crashes.
 */
export function createLogger(
  level: LogLevel,
  write: (line: string) => void = processOutput().stderr,
): Logger {
  const emit = (entryLevel: LogLevel, message: string, fields?: Record<string, unknown>): void => {
    if (ORDER[entryLevel] < ORDER[level]) return;
    const entry: Record<string, string> = {
      time: new Date().toISOString(),
      level: entryLevel,
      msg: redactText(message),
    };
    // Redacted in full, then cut: a secret straddling the cut would otherwise survive in part.
    for (const [key, value] of Object.entries(fields ?? {})) entry[key] = cut(redactText(safeString(value)));
    write(`${JSON.stringify(entry)}\n`);
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
  };
}

/** Longest field written; longer ones are cut after redaction. */
const MAX_FIELD = 2000;
/** Longest text redacted at all (a bound on the work per line); anything longer is dropped past it first. */
const MAX_SCANNED = 100_000;

function cut(text: string): string {
  return text.length > MAX_FIELD ? `${text.slice(0, MAX_FIELD)}…` : text;
}

function safeString(value: unknown): string {
  const whole = (() => {
    if (typeof value === 'string') return value;
    if (value instanceof Error) return `${value.name}: ${value.message}`;
    try {
      return String(JSON.stringify(value));
    } catch {
      return '[unserialisable]';
    }
  })();
  return whole.length > MAX_SCANNED ? whole.slice(0, MAX_SCANNED) : whole;
}

/** A logger that drops everything; for tests and tools that must stay quiet. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
