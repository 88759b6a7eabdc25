import { html, type SafeHtml } from "./html";
import type { UiSession } from "./ui-sessions";

/** The pages in the menu, by file name (all links are relative: the UI works under any path prefix). */
export const PAGES = [
  { path: "./", title: "Servers" },
  { path: "tools", title: "Tools" },
  { path: "activity", title: "Activity" },
  { path: "jobs", title: "Jobs" },
  { path: "approvals", title: "Approvals" },
  { path: "principals", title: "Principals and policies" },
] as const;

export type PagePath = (typeof PAGES)[number]["path"];

/** What every page shows around its content: which instance, who is signed in, the menu. */
export interface PageFrame {
  instance: string;
  session: UiSession | undefined;
  /** A warning every page shows above its content (a config edit that was refused). */
  notice?: string;
}

/** What one page shows: its title, its place in the menu, its content. */
export interface PageView {
  title: string;
  current?: PagePath | undefined;
  body: SafeHtml;
}

/** A whole page: the menu, the instance it shows, and the view's content. */
export function page(frame: PageFrame, view: PageView): SafeHtml {
  const { session } = frame;
  const { title, current, body } = view;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · codemux · ${frame.instance}</title>
<link rel="icon" href="icon.svg">
<link rel="stylesheet" href="ui.css">
<script src="ui.js" defer></script>
</head>
<body>
<header>
<strong>codemux</strong>
${session ? html`<nav>${PAGES.map((p) => html`<a href="${p.path}"${p.path === current ? html` aria-current="page"` : ""}>${p.title}</a>`)}</nav>` : ""}
<span class="instance" data-instance>instance ${frame.instance}</span>
${
  session
    ? html`<span class="muted">${session.identity.principal}</span>
<form class="inline" method="post" action="logout"><input type="hidden" name="csrf" value="${session.csrf}"><button type="submit">Sign out</button></form>`
    : ""
}
</header>
<main>
${frame.notice && session ? html`<p class="notice" role="alert">${frame.notice}</p>` : ""}
<h1>${title}</h1>
${body}
</main>
</body>
</html>
`;
}

/** The hidden field every state-changing form carries. */
export function csrfField(session: UiSession): SafeHtml {
  return html`<input type="hidden" name="csrf" value="${session.csrf}">`;
}

/** A timestamp as the pages show it: ISO, seconds precision. */
export function when(ms: number | string | undefined): string {
  if (ms === undefined) return "";
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? "" : date.toISOString().replace("T", " ").slice(0, 19);
}
