import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { REDACTED, redactText } from '../../src/redact.js';
import { slackLibraryLogger } from '../../src/slack/slack-logger.js';

describe('redaction', () => {
  it('masks every kind of Slack token: bot, user, app, refresh (xoxe), client (xoxc) and session cookie (xoxd)', () => {
    const tokens = [
      'xoxb-1234567890-abcdefghij',
      'xoxp-1234567890-abcdefghij',
      'xoxe-1-abcdefghijklmnop',
      'xoxe.xoxp-1-abcdefghijklmnop',
      'xoxc-1234567890-abcdefghij',
      'xoxd-abcdefghijklmnop1234',
    ];
    for (const token of tokens) expect(redactText(`token: ${token} end`)).toBe(`token: ${REDACTED} end`);
  });

  it('the logger redacts a field in full before cutting it, so a secret straddling the cut never leaks in part', () => {
    const lines: string[] = [];
    const logger = createLogger('debug', (line) => lines.push(line));
    const key = 'sk-straddle0123456789abcdefXYZ';
    // Cut at 2,000 characters first, the field would end with `sk-st`: no longer a whole key, never redacted.
    logger.warn('long', { detail: `${'a'.repeat(1994)} ${key}` });
    expect(lines.join('')).not.toContain(' sk-st');
    const token = 'xoxb-1234567890-straddling';
    logger.warn('long', { detail: `${'b'.repeat(1989)} ${token}` });
    expect(lines.join('')).not.toContain(' xoxb-1234');
  });

  it("Bolt's and the Web API client's lines go through the bot's logger without bodies, even at debug level", () => {
    const lines: string[] = [];
    const logger = slackLibraryLogger(
      createLogger('debug', (line) => lines.push(line)),
      'debug',
    );
    logger.debug(`http request body: {"text":"private words","token":"xoxb-1234567890-abcdefghij"}`);
    logger.debug('http request result: {"ok":true,"messages":[{"text":"private words"}]}');
    logger.debug('{"type":"event_callback","event":{"text":"private words"}}');
    logger.debug(`apiCall('chat.postMessage') start`);
    logger.warn('http request failed', { body: 'private words' });
    const written = lines.join('\n');
    expect(written).not.toContain('private words');
    expect(written).not.toContain('xoxb-');
    expect(written).toContain("apiCall('chat.postMessage') start");
    expect(written).toContain('http request body: (not logged)');
    expect(lines.every((line) => JSON.parse(line).source === 'slack')).toBe(true);
  });
});
