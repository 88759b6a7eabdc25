/** The proxy a request to `target` goes through: the server's `proxy` setting, else HTTPS_PROXY / HTTP_PROXY unless NO_PROXY matches. */
export function proxyFor(target: string | URL, setting: string | false | undefined, env: NodeJS.ProcessEnv): string | undefined {
  if (setting === false) return undefined;
  if (typeof setting === "string") return setting;
  const url = new URL(String(target));
  const pick = (...names: string[]) =>
    names
      .map((n) => env[n])
      .find((v) => v !== undefined && v.trim() !== "")
      ?.trim();
  const proxy =
    url.protocol === "https:" ? pick("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy") : pick("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy");
  if (!proxy || bypassed(url, pick("NO_PROXY", "no_proxy") ?? "")) return undefined;
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(proxy) ? proxy : `http://${proxy}`;
}

/** NO_PROXY as curl reads it: `*`, host names (a leading `.` or `*.` for subdomains), `host:port`, IPs. */
function bypassed(url: URL, noProxy: string): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  return noProxy
    .split(/[,\s]+/)
    .filter(Boolean)
    .some((raw) => {
      const entry = raw.toLowerCase();
      if (entry === "*") return true;
      const match = /^(.*?)(?::(\d+))?$/.exec(entry.replace(/^\[|\](?=:|$)/g, ""));
      const name = (match?.[1] ?? entry).replace(/^\*?\./, "");
      if (match?.[2] && match[2] !== port) return false;
      return host === name || host.endsWith(`.${name}`);
    });
}
