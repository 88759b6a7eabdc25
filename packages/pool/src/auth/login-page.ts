import type { ServerResponse } from "node:http";

/** The small page a login's browser tab ends on: escaped text, no script. */
export function sendLoginPage(response: ServerResponse, { status, title, text }: { status: number; title: string; text: string }): void {
  const html = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  response.writeHead(status, {
    "content-type": "text/html; charset=utf-8",
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'",
    connection: "close",
  });
  response.end(
    `<!doctype html><meta charset="utf-8"><title>codemux: ${html(title)}</title><body style="font-family:sans-serif;margin:3em"><h1>${html(title)}</h1><p>${html(text)}</p></body>`,
  );
}

/** Why the authorization server sent the browser back without a code (its `error` and `error_description`), or undefined when it sent one. */
export function refusalOf(query: URLSearchParams): string | undefined {
  const error = query.get("error");
  if (!error && query.get("code")) return undefined;
  const description = query.get("error_description");
  return `${error ?? "no code"}${description ? `: ${description}` : ""}`;
}
