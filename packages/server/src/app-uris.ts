/** An app's URIs as codemux shows them: `ui://<server>/<the rest>` (see docs/design/apps.md); skills' `skill://` URIs likewise (docs/design/skills.md). */
const UI_SCHEME = "ui://";
const SKILL_SCHEME = "skill://";
/** The schemes whose URIs codemux always shows under their server: a host recognises an app or a skill by its scheme, so it is kept. */
const SERVER_SCHEMES = [UI_SCHEME, SKILL_SCHEME];

/** Whether a URI is an app's (`ui://`). */
export function isAppUri(uri: string): boolean {
  return uri.startsWith(UI_SCHEME);
}

/** Whether a URI is a skill file's (`skill://`). */
export function isSkillUri(uri: string): boolean {
  return uri.startsWith(SKILL_SCHEME);
}

/** A downstream server's `ui://` URI as clients see it: `ui://<server>/<the rest>`; any other URI unchanged. */
export function shownAppUri(server: string, uri: string): string {
  return uri.startsWith(UI_SCHEME) ? `${UI_SCHEME}${server}/${uri.slice(UI_SCHEME.length)}` : uri;
}

/** The server and its own URI behind a `ui://` URI as clients see it; undefined for any other URI. */
export function appUriOwner(shown: string): { server: string; uri: string } | undefined {
  return isAppUri(shown) ? serverUriOwner(shown) : undefined;
}

/** Whether a URI's scheme is one codemux shows under its server (`ui://`, `skill://`). */
export function isServerSchemeUri(uri: string): boolean {
  return SERVER_SCHEMES.some((scheme) => uri.startsWith(scheme));
}

/** A downstream server's `ui://` or `skill://` URI as clients see it: `<scheme><server>/<the rest>`; any other URI unchanged. */
export function shownServerUri(server: string, uri: string): string {
  const scheme = SERVER_SCHEMES.find((s) => uri.startsWith(s));
  return scheme === undefined ? uri : `${scheme}${server}/${uri.slice(scheme.length)}`;
}

/** The server and its own URI behind a `ui://` or `skill://` URI as clients see it; undefined for any other URI. */
export function serverUriOwner(shown: string): { server: string; uri: string } | undefined {
  const scheme = SERVER_SCHEMES.find((s) => shown.startsWith(s));
  if (scheme === undefined) return undefined;
  const rest = shown.slice(scheme.length);
  const slash = rest.indexOf("/");
  if (slash <= 0) return undefined;
  return { server: rest.slice(0, slash), uri: `${scheme}${rest.slice(slash + 1)}` };
}
