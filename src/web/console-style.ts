/** The console's one stylesheet, served from the bot (`/console/assets/console.css`); no third-party origin. */
export const CONSOLE_CSS = `
:root { color-scheme: light dark; --accent: #1264a3; --muted: #616061; --line: #dddddd; --ok: #007a5a; --bad: #c4134a; }
@media (prefers-color-scheme: dark) { :root { --accent: #5eb1f0; --muted: #b0b0b0; --line: #4a4a4a; } }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.top { display: flex; flex-wrap: wrap; gap: .4rem 1.5rem; align-items: center; padding: .6rem 1.2rem; border-bottom: 1px solid var(--line); }
.brand { font-weight: 700; text-decoration: none; }
nav { display: flex; flex-wrap: wrap; gap: .3rem 1rem; }
nav a[aria-current="page"] { font-weight: 700; text-decoration: none; }
.signout { margin-left: auto; display: flex; gap: .6rem; align-items: center; }
.me { color: var(--muted); }
main { padding: 1rem 1.2rem; max-width: 72rem; }
.notice { padding: .5rem .8rem; border-left: 4px solid var(--accent); background: rgba(18,100,163,.08); }
.card { border: 1px solid var(--line); border-radius: 6px; padding: .8rem 1rem; margin: 0 0 1rem; }
.card h1 { margin: 0 0 .5rem; font-size: 1.5rem; }
.card h2, .card h3 { margin: 0 0 .4rem; font-size: 1.05rem; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; margin: .4rem 0; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; }
pre { background: rgba(127,127,127,.12); padding: .6rem; overflow: auto; max-height: 24rem; white-space: pre-wrap; word-break: break-word; }
.actions { display: flex; flex-wrap: wrap; gap: .6rem 1.5rem; align-items: center; margin-top: .6rem; }
.actions form { display: flex; flex-wrap: wrap; gap: .4rem .6rem; align-items: center; }
.actions input[type=text] { width: min(24rem, 70vw); }
details { margin-top: .8rem; }
summary { cursor: pointer; width: max-content; }
details form { margin-top: .4rem; }
button { white-space: nowrap; font: inherit; padding: .35rem .9rem; border-radius: 4px; border: 1px solid var(--line); cursor: pointer; }
button.approve { background: var(--ok); color: #fff; border-color: var(--ok); }
button.reject { background: var(--bad); color: #fff; border-color: var(--bad); }
label { display: flex; flex-direction: column; gap: .2rem; font-size: .9rem; }
input[type=text], input[type=date], select, textarea { font: inherit; padding: .3rem; }
textarea { width: 100%; min-height: 8rem; font-family: ui-monospace, monospace; }
table { border-collapse: collapse; width: 100%; margin: .6rem 0 1.2rem; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
.muted { color: var(--muted); }
.badge { display: inline-block; padding: .1rem .5rem; border-radius: 999px; font-size: .85rem; border: 1px solid currentColor; }
.badge.ok { color: var(--ok); }
.badge.bad { color: var(--bad); }
.filters { display: flex; flex-wrap: wrap; gap: .6rem; align-items: flex-end; margin-bottom: .8rem; }
.chart { margin: 1rem 0 .2rem; }
.chart svg { max-width: 100%; height: auto; }
.chart h2 { font-size: 1.05rem; margin: 0 0 .4rem; }
.legend { display: flex; flex-wrap: wrap; gap: .4rem 1rem; list-style: none; padding: 0; margin: .2rem 0; font-size: .9rem; }
.legend svg { vertical-align: -1px; }
.chart-data { font-size: .85rem; font-variant-numeric: tabular-nums; }
`;
