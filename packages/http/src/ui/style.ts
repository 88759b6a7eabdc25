/** The admin page's stylesheet, served as /ui/ui.css (the CSP allows no inline style). */
export const STYLESHEET = `
:root { color-scheme: light dark; --fg: #1d2330; --muted: #667085; --line: #d0d5dd; --bg: #fff; --accent: #2f5bd3; --bad: #b42318; --ok: #067647; }
@media (prefers-color-scheme: dark) { :root { --fg: #e4e7ec; --muted: #98a2b3; --line: #344054; --bg: #101828; --accent: #84adff; --bad: #fda29b; --ok: #75e0a7; } }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; gap: 1.5rem; align-items: baseline; padding: .6rem 1.2rem; border-bottom: 1px solid var(--line); flex-wrap: wrap; }
header strong { font-size: 1.05rem; }
header nav { display: flex; gap: 1rem; flex-wrap: wrap; }
header nav a[aria-current] { font-weight: 600; text-decoration: underline; }
header .instance { color: var(--muted); margin-left: auto; }
header form { margin: 0; }
main { padding: 1rem 1.2rem; max-width: 1200px; }
a { color: var(--accent); }
table { border-collapse: collapse; width: 100%; margin: .5rem 0 1rem; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 500; }
pre { background: color-mix(in srgb, var(--line) 35%, transparent); padding: .6rem; overflow: auto; max-height: 28rem; white-space: pre-wrap; word-break: break-word; }
.muted { color: var(--muted); }
.bad { color: var(--bad); }
.ok { color: var(--ok); }
.notice { border: 1px solid var(--line); padding: .6rem .8rem; border-radius: 6px; }
form.inline { display: inline; margin: 0; }
label { display: block; margin: .4rem 0 .1rem; font-weight: 500; }
input[type=text], input[type=number], input[type=password], input[type=search], textarea, select { font: inherit; padding: .3rem .4rem; width: min(100%, 36rem); border: 1px solid var(--line); border-radius: 4px; background: var(--bg); color: var(--fg); }
textarea { min-height: 4rem; font-family: ui-monospace, monospace; }
button { font: inherit; padding: .3rem .8rem; border: 1px solid var(--line); border-radius: 4px; background: var(--bg); color: var(--fg); cursor: pointer; }
button.primary { background: var(--accent); color: var(--bg); border-color: var(--accent); }
.diff-del { color: var(--bad); }
.diff-add { color: var(--ok); }
.filters { display: flex; gap: .6rem; align-items: end; flex-wrap: wrap; }
.filters label { margin: 0; }
`;

/** The tab's icon (else a browser asks for /favicon.ico, outside /ui). */
export const ICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#2f5bd3"/><path d="M4 4h2v8H4zM10 4h2v8h-2zM6 7h4v2H6z" fill="#fff"/></svg>`;
