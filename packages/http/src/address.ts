import { hostname, networkInterfaces } from "node:os";

export const DEFAULT_HOST = "127.0.0.1";
export const DEFAULT_PORT = 3920;

const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "::1", "[::1]"];

/** `[HOST:]PORT`, `HOST`, `:PORT` or `[::1]:PORT`; the parts missing come from `fallback` (loopback and port 3920). */
export function parseListen(
  text: string | undefined,
  fallback: { host: string; port: number } = { host: DEFAULT_HOST, port: DEFAULT_PORT },
): { host: string; port: number } {
  const value = (text ?? "").trim();
  if (!value) return fallback;
  let host = fallback.host;
  let portText = "";
  const bracket = /^\[([^\]]+)\](?::(\d*))?$/.exec(value);
  if (bracket) {
    host = bracket[1] as string;
    portText = bracket[2] ?? "";
  } else if (/^\d+$/.test(value)) {
    portText = value;
  } else {
    const colon = value.lastIndexOf(":");
    if (colon === -1 || value.indexOf(":") !== colon) {
      // A bare host (an IPv6 address without brackets has several colons and no port).
      host = value;
    } else {
      host = value.slice(0, colon) || fallback.host;
      portText = value.slice(colon + 1);
    }
  }
  const port = portText === "" ? fallback.port : Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new RangeError(`"${value.slice(0, 100)}" has no valid port; write [HOST:]PORT, such as 127.0.0.1:3920 or :0 for any free port.`);
  return { host, port };
}

/**
 * `CODEMUX_HOST` and `CODEMUX_PORT` (for containers and client configs that set variables, not flags), over the defaults;
 * unset or empty means the default, and a bad value is a RangeError saying which variable and what to write.
 */
export function listenFromEnv(env: NodeJS.ProcessEnv = process.env): { host: string; port: number } {
  const host = env.CODEMUX_HOST?.trim() || DEFAULT_HOST;
  const portText = env.CODEMUX_PORT?.trim() || String(DEFAULT_PORT);
  // One colon is an IPv4 address or name with a port; an IPv6 address has several.
  if (!/^\[?[A-Za-z0-9.:%-]{1,253}\]?$/.test(host) || (host.split(":").length === 2 && !host.startsWith("[")))
    throw new RangeError(
      `CODEMUX_HOST is "${host.slice(0, 100)}"; give a host name or address without a port, such as 0.0.0.0 (the port goes in CODEMUX_PORT).`,
    );
  const port = /^\d{1,5}$/.test(portText) ? Number(portText) : Number.NaN;
  if (!(port >= 0 && port <= 65535))
    throw new RangeError(`CODEMUX_PORT is "${portText.slice(0, 100)}"; give a port number from 0 to 65535 (0 picks a free one).`);
  return { host: host.replace(/^\[(.*)\]$/, "$1"), port };
}

export function isWildcard(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "");
  return h === "0.0.0.0" || h === "::" || h === "";
}

/** `host:port` as a URL authority (IPv6 in brackets). */
export function authority(host: string, port: number): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * Host header names accepted by default (DNS-rebinding protection): loopback names, the bound
 * address and, on a wildcard bind, this machine's own addresses and name. Anything else needs
 * `allowedHosts` (a reverse proxy's public name, for instance).
 */
export function defaultAllowedHosts(boundHost: string): string[] {
  const names = new Set<string>(LOOPBACK_NAMES);
  if (isWildcard(boundHost)) {
    names.add(hostname().toLowerCase());
    for (const list of Object.values(networkInterfaces())) for (const info of list ?? []) names.add(info.address.toLowerCase());
  } else {
    names.add(boundHost.toLowerCase().replace(/^\[|\]$/g, ""));
  }
  return [...names];
}

/** The host name of a `Host` header without its port ("[::1]:3920" -> "::1"); undefined when malformed. */
export function hostOfHeader(header: string): string | undefined {
  const value = header.trim().toLowerCase();
  if (!value || value.length > 300) return undefined;
  const bracket = /^\[([0-9a-f:.]+)\](?::\d{1,5})?$/.exec(value);
  if (bracket) return bracket[1];
  const plain = /^([a-z0-9.-]+)(?::\d{1,5})?$/.exec(value);
  return plain ? plain[1] : undefined;
}
