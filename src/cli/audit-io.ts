/** Where the audit commands write. */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  now(): number;
}
