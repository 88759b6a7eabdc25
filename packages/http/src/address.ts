import { hostname, networkInterfaces } from "node:os";

export const DEFAULT_HOST = "127.0.0.1";
export const DEFAULT_PORT = 3920;

const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "::1", "[::1]"];

/** `[HOST:]PORT`, `HOST`, `:PORT` or `[::1]:PORT`; loopback and port 3920 when parts are missing. */
export function parseListen(text: string | undefined): { host: string; port: number } {
  const value = (text ?? "").trim();
  if (!value) return { host: DEFAULT_HOST, port: DEFAULT_PORT };
  let host = DEFAULT_HOST;
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
      host = value.slice(0, colon) || DEFAULT_HOST;
      portText = value.slice(colon + 1);
    }
  }
  const port = portText === "" ? DEFAULT_PORT : Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new RangeError(`"${value.slice(0, 100)}" has no valid port; write [HOST:]PORT, such as 127.0.0.1:3920 or :0 for any free port.`);
  return { host, port };
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
