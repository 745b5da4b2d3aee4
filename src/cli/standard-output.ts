/**
 * For commands whose output is often piped (`npm run audit -- list | head -1`): when the reader closes the
 * pipe, what it wanted is printed, so the command stops at once with exit code 0 and no stack trace. Any
 * other failure to write is reported on stderr with exit code 2.
 */
export function stopQuietlyWhenReaderCloses(stream: NodeJS.WriteStream = process.stdout): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    process.stderr.write(`Cannot write the output: ${error.message}\n`);
    process.exit(2);
  });
}
