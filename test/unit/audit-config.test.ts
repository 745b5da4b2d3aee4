import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

const http = { SLACK_BOT_TOKEN: 'xoxb-1', SLACK_SIGNING_SECRET: 's', OPENAI_API_KEY: 'sk-1' };
const problems = (env: Record<string, string>) => {
  const result = loadConfig({ ...http, ...env });
  return result.ok ? [] : result.problems;
};

describe('audit delivery settings', () => {
  it('a webhook needs its secret and an http(s) URL; every problem is listed together', () => {
    expect(problems({ AUDIT_WEBHOOK_URL: 'https://siem.example.com/a' })).toEqual([
      'AUDIT_WEBHOOK_SECRET: required with AUDIT_WEBHOOK_URL (the receiver checks signatures with it)',
    ]);
    const all = problems({
      AUDIT_WEBHOOK_URL: 'ftp://siem.example.com/a',
      AUDIT_WEBHOOK_SECRET: 'short',
      AUDIT_WEBHOOK_BATCH: '0',
      AUDIT_WEBHOOK_MAX_BYTES: '1000',
      AUDIT_CHECKPOINT_CHANNEL: 'general',
    }).join('\n');
    for (const name of [
      'AUDIT_WEBHOOK_URL',
      'AUDIT_WEBHOOK_SECRET',
      'AUDIT_WEBHOOK_BATCH',
      'AUDIT_WEBHOOK_MAX_BYTES',
      'AUDIT_CHECKPOINT_CHANNEL',
    ]) {
      expect(all).toContain(`${name}:`);
    }
    const ok = loadConfig({
      ...http,
      AUDIT_WEBHOOK_URL: 'http://127.0.0.1:9/a',
      AUDIT_WEBHOOK_SECRET: 'x'.repeat(16),
    });
    if (!ok.ok) throw new Error(ok.problems.join());
    expect(ok.config.audit.webhook).toEqual({
      url: 'http://127.0.0.1:9/a',
      secret: 'x'.repeat(16),
      batchSize: 100,
      timeoutMs: 10_000,
      maxBytes: 1_048_576,
    });
    const none = loadConfig(http);
    expect(none.ok && none.config.audit).toEqual({
      webhook: undefined,
      signingKeyFile: undefined,
      checkpointChannel: undefined,
    });
  });

  it('the signing key must be a readable Ed25519 private key in PEM', () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-key-'));
    const ed = join(dir, 'ed.pem');
    const rsa = join(dir, 'rsa.pem');
    const junk = join(dir, 'junk.pem');
    writeFileSync(ed, generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }));
    writeFileSync(
      rsa,
      generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }),
    );
    writeFileSync(junk, 'not a key');
    expect(problems({ AUDIT_SIGNING_KEY: ed })).toEqual([]);
    expect(problems({ AUDIT_SIGNING_KEY: rsa }).join()).toContain(
      'holds a rsa key; an Ed25519 key is needed',
    );
    expect(problems({ AUDIT_SIGNING_KEY: junk }).join()).toContain('is not a private key in PEM');
    expect(problems({ AUDIT_SIGNING_KEY: join(dir, 'missing.pem') }).join()).toContain('cannot read');
    expect(problems({ AUDIT_CHECKPOINT_CHANNEL: 'C0123ABCD' })).toEqual([
      'AUDIT_SIGNING_KEY: required with AUDIT_CHECKPOINT_CHANNEL (checkpoints are signed)',
    ]);
  });

  it('installed into several workspaces, the checkpoint channel names its workspace', () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-key-'));
    const key = join(dir, 'ed.pem');
    writeFileSync(key, generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }));
    const oauth = {
      SLACK_BOT_TOKEN: '',
      SLACK_CLIENT_ID: '1.2',
      SLACK_CLIENT_SECRET: 'secret',
      SLACK_STATE_SECRET: 'x'.repeat(32),
      TOKEN_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
      AUDIT_SIGNING_KEY: key,
    };
    expect(problems({ ...oauth, AUDIT_CHECKPOINT_CHANNEL: 'C0CHECKS' })).toEqual([
      "AUDIT_CHECKPOINT_CHANNEL: installed into several workspaces, name the channel's workspace too: T012AB:C0CHECKS (its team ID, a colon, the channel ID)",
    ]);
    const named = loadConfig({ ...http, ...oauth, AUDIT_CHECKPOINT_CHANNEL: 'T0AB:C0CHECKS' });
    expect(named.ok && named.config.audit.checkpointChannel).toEqual({
      teamId: 'T0AB',
      channelId: 'C0CHECKS',
    });
    const plain = loadConfig({ ...http, AUDIT_SIGNING_KEY: key, AUDIT_CHECKPOINT_CHANNEL: 'C0CHECKS' });
    expect(plain.ok && plain.config.audit.checkpointChannel).toEqual({
      teamId: undefined,
      channelId: 'C0CHECKS',
    });
  });
});
