import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/** A plain `node:http` server bound to 127.0.0.1 on a port the OS picked. */
export interface LocalServer {
  server: Server;
  port: number;
  /** Stops listening and destroys open connections, including responses a fake left hanging on purpose. */
  close(): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/**
 * Starts `handler` on `127.0.0.1:0`. Port 0 avoids both clashes between parallel test files and the ports
 * that `fetch` refuses outright ("bad port", e.g. 6000 or 6665-6669).
 * A handler that throws answers HTTP 500 with the error text, so a bug in a fake is loud, not a hang.
 */
export async function listenLocal(handler: Handler): Promise<LocalServer> {
  const server = createServer((req, res) => {
    handler(req, res).catch((error: unknown) => {
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'text/plain' });
      }
      res.end(`fake server error: ${error instanceof Error ? error.stack : String(error)}`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('fake server: no TCP address');
  const { port } = address;
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return closing;
  };
  return { server, port, close };
}

/** Reads the whole request body as UTF-8 text. */
export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Sends `body` as JSON with the given status and extra headers. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  sendText(res, status, JSON.stringify(body), {
    'content-type': 'application/json; charset=utf-8',
    ...headers,
  });
}

/** Sends a text body; header names are lower-cased so a caller's `Content-Type` replaces the default one. */
export function sendText(
  res: ServerResponse,
  status: number,
  text: string,
  headers: Record<string, string> = {},
): void {
  const merged: Record<string, string> = { 'content-type': 'text/plain; charset=utf-8' };
  for (const [name, value] of Object.entries(headers)) merged[name.toLowerCase()] = value;
  merged['content-length'] = String(Buffer.byteLength(text));
  res.writeHead(status, merged);
  res.end(text);
}
