import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import type { ConsoleSession } from '../../console/ports.js';
import type { Roles } from '../console-deps.js';

/** What html`` makes: escaped text, safe to put in a page. */
export type Markup = HtmlEscapedString | Promise<HtmlEscapedString>;

export interface PageFrame {
  title: string;
  /** The signed-in person and what they may open; undefined on the sign-in pages. */
  who?: { session: ConsoleSession; roles: Roles };
  /** The navigation entry of this page. */
  current?: 'decide' | 'history' | 'charts' | 'policy';
  /** A sentence shown above the content (the outcome of the last action). */
  notice?: string | undefined;
}

/**
 * The page around every console view: navigation by role, sign-out, one stylesheet from the bot itself, and no
 * script unless a view adds its own file. Every value goes through html``, which escapes it.
 */
export function page(frame: PageFrame, body: Markup): Markup {
  const { who } = frame;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${frame.title} · Approvals</title>
<link rel="stylesheet" href="/console/assets/console.css">
</head>
<body>
<header class="top">
  <a class="brand" href="/console">Approvals</a>
  ${who ? navigation(frame, who.roles) : ''}
  ${
    who
      ? html`<form class="signout" method="post" action="/console/logout">
    <input type="hidden" name="csrf" value="${who.session.csrfToken}">
    <span class="me">${who.session.userId}</span>
    <button type="submit">Sign out</button>
  </form>`
      : ''
  }
</header>
<main id="main">
${frame.notice ? html`<p class="notice" role="status">${frame.notice}</p>` : ''}
${body}
</main>
</body>
</html>`;
}

function navigation(frame: PageFrame, roles: Roles): Markup {
  const item = (key: NonNullable<PageFrame['current']>, href: string, label: string) =>
    html`<a href="${href}"${frame.current === key ? html` aria-current="page"` : ''}>${label}</a>`;
  return html`<nav aria-label="Console">
    ${item('decide', '/console', 'Decide')}
    ${roles.auditor ? item('history', '/console/history', 'History') : ''}
    ${roles.auditor ? item('charts', '/console/charts', 'Charts') : ''}
    ${roles.admin ? item('policy', '/console/policy', 'Policy') : ''}
  </nav>`;
}

/** A time as people read it, in UTC, with the machine-readable value kept. */
export function time(isoTime: string | null): Markup {
  if (isoTime === null) return html`—`;
  return html`<time datetime="${isoTime}">${isoTime.replace('T', ' ').slice(0, 16)} UTC</time>`;
}

/**
 * A table or chart in a frame that scrolls sideways on a narrow screen, so the page itself never gets wider than the
 * screen. The frame is a named region that takes the focus, so it can be scrolled with the keyboard too.
 */
export function scrolling(label: string, content: Markup): Markup {
  return html`<div class="scroll-frame" role="region" aria-label="${label}" tabindex="0">${content}</div>`;
}
