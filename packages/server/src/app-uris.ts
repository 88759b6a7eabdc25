/** An app's URIs as codemux shows them: `ui://<server>/<the rest>` (see docs/design/apps.md). */
const UI_SCHEME = "ui://";

/** Whether a URI is an app's (`ui://`). */
export function isAppUri(uri: string): boolean {
  return uri.startsWith(UI_SCHEME);
}

/** A downstream server's `ui://` URI as clients see it: `ui://<server>/<the rest>`; any other URI unchanged. */
export function shownAppUri(server: string, uri: string): string {
  return uri.startsWith(UI_SCHEME) ? `${UI_SCHEME}${server}/${uri.slice(UI_SCHEME.length)}` : uri;
}

/** The server and its own URI behind a `ui://` URI as clients see it; undefined for any other URI. */
export function appUriOwner(shown: string): { server: string; uri: string } | undefined {
  if (!shown.startsWith(UI_SCHEME)) return undefined;
  const rest = shown.slice(UI_SCHEME.length);
  const slash = rest.indexOf("/");
  if (slash <= 0) return undefined;
  return { server: rest.slice(0, slash), uri: `${UI_SCHEME}${rest.slice(slash + 1)}` };
}
