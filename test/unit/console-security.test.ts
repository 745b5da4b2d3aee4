import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { consoleHeaders, loopbackUnlessPublic } from '../../src/web/console-security.js';

/** A console-like app behind the two outer layers, asked as if from `remoteAddress`. */
function ask(publicUrl: string | undefined, remoteAddress: string) {
  const app = new Hono();
  app.use(loopbackUnlessPublic({ config: { publicUrl, slackSignIn: undefined, slackApiUrl: '' } }));
  app.use(consoleHeaders());
  app.get('/console/login', (c) => c.html('<h1>Sign in</h1>'));
  return app.request('/console/login', {}, { incoming: { socket: { remoteAddress } } });
}

describe('the console outside the sign-in', () => {
  it('without CONSOLE_URL answers this machine only; with it, everyone', async () => {
    expect((await ask(undefined, '127.0.0.1')).status).toBe(200);
    expect((await ask(undefined, '::1')).status).toBe(200);
    expect((await ask(undefined, '::ffff:127.0.0.1')).status).toBe(200);
    expect((await ask(undefined, '10.1.2.3')).status).toBe(404);
    expect((await ask(undefined, '::ffff:10.1.2.3')).status).toBe(404);
    expect((await ask('https://approvals.example.com', '10.1.2.3')).status).toBe(200);
  });

  it('sends a strict Content-Security-Policy and no referrer', async () => {
    const answer = await ask(undefined, '127.0.0.1');
    const csp = answer.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(answer.headers.get('referrer-policy')).toBe('no-referrer');
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
  });
});

describe('the console inside the bot process', () => {
  it("leaves Node's own Request and Response in place for the bot's other fetch calls", async () => {
    const { Request: before, Response: beforeResponse } = globalThis;
    const { consoleRequestListener } = await import('../../src/web/console-app.js');
    const deps = {} as Parameters<typeof consoleRequestListener>[0];
    consoleRequestListener(deps);
    expect(globalThis.Request).toBe(before);
    expect(globalThis.Response).toBe(beforeResponse);
  });
});
