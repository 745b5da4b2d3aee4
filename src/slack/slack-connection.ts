/**
 * Whether Slack can deliver events to this process: over Socket Mode, the state of its WebSocket
 * (`connecting` until the first `hello`, `reconnecting` from the moment a connection is lost until the next
 * one, `disconnected` once stopped); in HTTP mode, `listening` once the server listens (Slack's deliveries
 * cannot be observed from here).
 */
export type SlackConnectionState = 'connecting' | 'connected' | 'reconnecting' | 'disconnected' | 'listening';

export interface SlackConnection {
  state: SlackConnectionState;
  /** When it entered this state (ms since the epoch). */
  since: number;
}

export interface SlackConnectionMonitor {
  current(): SlackConnection;
  /** HTTP mode: the server listens. */
  listening(): void;
  /** Follows a Socket Mode client's events (`@slack/socket-mode`'s SocketModeClient). */
  follow(client: { on(event: string, listener: () => void): unknown }): void;
}

/** True when events can reach the bot: /healthz answers 503 otherwise. */
export function canReceiveEvents(connection: SlackConnection): boolean {
  switch (connection.state) {
    case 'connected':
    case 'listening':
      return true;
    case 'connecting':
    case 'reconnecting':
    case 'disconnected':
      return false;
  }
}

export function createSlackConnectionMonitor(now: () => number): SlackConnectionMonitor {
  let connection: SlackConnection = { state: 'connecting', since: now() };
  const enter = (state: SlackConnectionState) => {
    if (connection.state !== state) connection = { state, since: now() };
  };
  return {
    current: () => connection,
    listening: () => enter('listening'),
    follow(client) {
      client.on('connected', () => enter('connected'));
      // The WebSocket closed: the client waits, then asks for a new URL and connects again.
      client.on('close', () => {
        if (connection.state === 'connected') enter('reconnecting');
      });
      client.on('reconnecting', () => enter('reconnecting'));
      client.on('disconnected', () => enter('disconnected'));
    },
  };
}
