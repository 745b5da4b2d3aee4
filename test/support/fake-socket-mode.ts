import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { FakeSlack } from './fake-slack.js';
import { waitUntil } from './wait.js';

const WS_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

export interface FakeSocketMode {
  /** Envelope ids the app acknowledged, with any response payload. */
  acks: { envelopeId: string; payload: unknown }[];
  /** Resolves once the app has connected and been sent `hello`. */
  connected(): Promise<void>;
  /** Sends an envelope (`events_api`, `interactive`, `slash_commands`) with a fresh envelope id; returns it. */
  send(type: string, payload: Record<string, unknown>): string;
  waitForAck(envelopeId: string, timeoutMs?: number): Promise<void>;
  /** Drops every connection, as a network failure would; the server keeps accepting new ones. */
  drop(): void;
  /** How many connections the app has opened so far. */
  connections(): number;
  close(): Promise<void>;
}

/**
 * Slack's Socket Mode end of the wire: `apps.connections.open` on the fake Web API hands out a ws:// URL served
 * here; on connect the app gets `hello`, then envelopes, and must ack each with `{ envelope_id }`. A minimal
 * RFC 6455 server (text, ping/pong and close frames) so the real `@slack/socket-mode` client is exercised.
 */
export async function startFakeSocketMode(slack: FakeSlack): Promise<FakeSocketMode> {
  const acks: FakeSocketMode['acks'] = [];
  const sockets = new Set<Socket>();
  let counter = 0;
  let opened = 0;
  const server: Server = createServer((_req, res) => res.writeHead(426).end());
  server.on('upgrade', (req, socket: Socket) => {
    const key = req.headers['sec-websocket-key'];
    if (typeof key !== 'string') {
      socket.destroy();
      return;
    }
    const accept = createHash('sha1')
      .update(key + WS_GUID)
      .digest('base64');
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
    );
    sockets.add(socket);
    opened += 1;
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => sockets.delete(socket));
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (let frame = readFrame(buffered); frame; frame = readFrame(buffered)) {
        buffered = buffered.subarray(frame.length);
        if (frame.opcode === 0x9) socket.write(encodeFrame(0xa, frame.payload));
        if (frame.opcode === 0x8) socket.end(encodeFrame(0x8, Buffer.alloc(0)));
        if (frame.opcode === 0x1) {
          const message: unknown = JSON.parse(frame.payload.toString('utf8'));
          if (
            message &&
            typeof message === 'object' &&
            'envelope_id' in message &&
            typeof message.envelope_id === 'string'
          ) {
            acks.push({
              envelopeId: message.envelope_id,
              payload: 'payload' in message ? message.payload : undefined,
            });
          }
        }
      }
    });
    socket.write(
      encodeFrame(
        0x1,
        Buffer.from(JSON.stringify({ type: 'hello', num_connections: 1, connection_info: { app_id: 'A1' } })),
      ),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no address');
  const url = `ws://127.0.0.1:${address.port}/link`;
  slack.setResponse('apps.connections.open', () => ({ body: { ok: true, url } }));
  return {
    acks,
    connected: () =>
      waitUntil(() => sockets.size > 0, { timeoutMs: 10_000, message: 'no Socket Mode connection' }).then(
        () => undefined,
      ),
    send(type, payload) {
      counter += 1;
      const envelopeId = `env-${counter}`;
      const frame = encodeFrame(
        0x1,
        Buffer.from(
          JSON.stringify({
            envelope_id: envelopeId,
            type,
            payload,
            accepts_response_payload: false,
            retry_attempt: 0,
            retry_reason: '',
          }),
        ),
      );
      for (const socket of sockets) socket.write(frame);
      return envelopeId;
    },
    waitForAck: (envelopeId, timeoutMs = 5000) =>
      waitUntil(() => acks.some((ack) => ack.envelopeId === envelopeId), {
        timeoutMs,
        message: `no ack for ${envelopeId}`,
      }).then(() => undefined),
    drop() {
      for (const socket of sockets) socket.destroy();
    },
    connections: () => opened,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function readFrame(data: Buffer): { opcode: number; payload: Buffer; length: number } | undefined {
  if (data.length < 2) return undefined;
  const first = data[0] ?? 0;
  const second = data[1] ?? 0;
  let length = second & 0x7f;
  let offset = 2;
  if (length === 126) {
    if (data.length < 4) return undefined;
    length = data.readUInt16BE(2);
    offset = 4;
  } else if (length === 127) {
    if (data.length < 10) return undefined;
    length = Number(data.readBigUInt64BE(2));
    offset = 10;
  }
  const masked = (second & 0x80) !== 0;
  const mask = masked ? data.subarray(offset, offset + 4) : undefined;
  if (masked) offset += 4;
  if (data.length < offset + length) return undefined;
  const payload = Buffer.from(data.subarray(offset, offset + length));
  if (mask) for (let i = 0; i < payload.length; i += 1) payload[i] = (payload[i] ?? 0) ^ (mask[i % 4] ?? 0);
  return { opcode: first & 0x0f, payload, length: offset + length };
}

function encodeFrame(opcode: number, payload: Buffer): Buffer {
  const header =
    payload.length < 126
      ? Buffer.from([0x80 | opcode, payload.length])
      : payload.length < 65536
        ? Buffer.from([0x80 | opcode, 126, payload.length >> 8, payload.length & 0xff])
        : Buffer.concat([Buffer.from([0x80 | opcode, 127]), bigLength(payload.length)]);
  return Buffer.concat([header, payload]);
}

function bigLength(length: number): Buffer {
  const buffer = Buffer.alloc(8);
  buffer.writeBigUInt64BE(BigInt(length));
  return buffer;
}
