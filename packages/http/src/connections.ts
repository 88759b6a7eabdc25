import type { IncomingMessage } from "node:http";
import { BlockList, isIP, type Socket } from "node:net";
import { HttpError } from "./errors";

/** X-Forwarded-For is read from its end, at most this many hops and characters: a long header costs no more. */
const MAX_FORWARDED_HOPS = 20;
const MAX_FORWARDED_CHARS = 2048;

export interface ConnectionGuardOptions {
  /** Open connections one client address may hold. */
  maxPerAddress: number;
  /** Peers (addresses or CIDR ranges) whose X-Forwarded-For names the client. */
  trustedProxies: readonly string[];
  /** A connection with no authenticated request after this long is closed. */
  authTimeoutMs: number;
  /** Called for each connection refused at the limit or closed at the deadline. */
  onRefused?: (reason: "per_address" | "auth_timeout") => void;
}

/**
 * Keeps one client from taking every connection: each client address holds at most `maxPerAddress`
 * open connections (the address is the peer's, or for a trusted proxy the client its
 * X-Forwarded-For names), and a connection that has sent no authenticated request within
 * `authTimeoutMs` is closed, so trickling unauthenticated connections cannot pile up.
 */
export class ConnectionGuard {
  readonly #options: ConnectionGuardOptions;
  readonly #trusted: BlockList;
  readonly #open = new Map<string, number>();
  /** The address each connection counts against (none yet for a trusted proxy's before its first request). */
  readonly #owner = new WeakMap<Socket, string>();
  readonly #deadlines = new WeakMap<Socket, NodeJS.Timeout>();
  readonly #refused = new WeakSet<Socket>();

  constructor(options: ConnectionGuardOptions) {
    this.#options = options;
    this.#trusted = trustedProxyList(options.trustedProxies);
  }

  /** A new connection: given its deadline, counted against its peer (a trusted proxy's waits for its requests), refused past the limit. */
  accept(socket: Socket): void {
    const deadline = setTimeout(() => {
      this.#options.onRefused?.("auth_timeout");
      socket.destroy();
    }, this.#options.authTimeoutMs);
    deadline.unref();
    this.#deadlines.set(socket, deadline);
    socket.once("close", () => {
      clearTimeout(deadline);
      this.#release(socket);
    });
    const peer = normalizeAddress(socket.remoteAddress);
    if (this.#isTrusted(peer) || this.#take(socket, peer)) return;
    this.#options.onRefused?.("per_address");
    this.#refused.add(socket);
    const body = JSON.stringify({ error: { code: "quota", message: this.#refusal(peer) } });
    // Answered and closed before a byte is read: a refused connection holds nothing while it trickles.
    socket.end(
      `HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json; charset=utf-8\r\nretry-after: 5\r\nconnection: close\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    socket.once("finish", () => socket.destroy());
  }

  /** True for a connection `accept` refused: its requests are not answered. */
  refused(socket: Socket): boolean {
    return this.#refused.has(socket);
  }

  /**
   * The client address of a request: the peer's, or for a trusted proxy the client its
   * X-Forwarded-For names, whose count this connection then joins. Past that client's limit, a 429
   * that closes the connection.
   */
  clientOf(req: IncomingMessage): string {
    const socket = req.socket;
    const peer = normalizeAddress(socket.remoteAddress);
    if (!this.#isTrusted(peer)) return peer;
    const client = this.#forwardedClient(req.headers["x-forwarded-for"]) ?? peer;
    if (this.#owner.get(socket) === client) return client;
    this.#release(socket);
    if (this.#take(socket, client)) return client;
    this.#options.onRefused?.("per_address");
    throw new HttpError("QUOTA", this.#refusal(client), { headers: { connection: "close", "retry-after": "5" } });
  }

  /** The connection carried an authenticated request: its deadline is lifted. */
  authenticated(socket: Socket): void {
    clearTimeout(this.#deadlines.get(socket));
  }

  #refusal(address: string): string {
    const max = this.#options.maxPerAddress;
    return `Too many connections from ${address}: ${max} are open, the limit per address (connections per address: ${max}); close idle connections and retry, or raise http.limits.connectionsPerAddress in the config.`;
  }

  #take(socket: Socket, address: string): boolean {
    const open = this.#open.get(address) ?? 0;
    if (open >= this.#options.maxPerAddress) return false;
    this.#open.set(address, open + 1);
    this.#owner.set(socket, address);
    return true;
  }

  #release(socket: Socket): void {
    const address = this.#owner.get(socket);
    if (address === undefined) return;
    this.#owner.delete(socket);
    const open = (this.#open.get(address) ?? 1) - 1;
    if (open > 0) this.#open.set(address, open);
    else this.#open.delete(address);
  }

  #isTrusted(address: string): boolean {
    const family = isIP(address);
    return family !== 0 && this.#trusted.check(address, family === 6 ? "ipv6" : "ipv4");
  }

  /** The rightmost hop that is not a trusted proxy: hops to its left were written by the client and prove nothing. */
  #forwardedClient(header: string | string[] | undefined): string | undefined {
    const text = (Array.isArray(header) ? header.join(",") : (header ?? "")).slice(-MAX_FORWARDED_CHARS);
    const hops = text.split(",").slice(-MAX_FORWARDED_HOPS).reverse();
    let client: string | undefined;
    for (const hop of hops) {
      const address = normalizeAddress(hop.trim());
      if (isIP(address) === 0) break;
      client = address;
      if (!this.#isTrusted(address)) break;
    }
    return client;
  }
}

/**
 * A trusted-proxy list as a `BlockList`: addresses and CIDR ranges (`127.0.0.1`, `10.0.0.0/8`,
 * `fd00::/8`). A malformed entry throws a RangeError that names it.
 */
export function trustedProxyList(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const match = /^([^/\s]+)(?:\/(\d{1,3}))?$/.exec(entry.trim());
    const family = match ? isIP(match[1] as string) : 0;
    const bits = match?.[2] === undefined ? undefined : Number(match[2]);
    if (!match || family === 0 || (bits !== undefined && bits > (family === 6 ? 128 : 32))) {
      throw new RangeError(`Trusted proxy "${entry.slice(0, 100)}" is not an IP address or a CIDR range; write one such as 127.0.0.1 or 10.0.0.0/8.`);
    }
    const type = family === 6 ? "ipv6" : "ipv4";
    if (bits === undefined) list.addAddress(match[1] as string, type);
    else list.addSubnet(match[1] as string, bits, type);
  }
  return list;
}

/** One spelling per address: IPv4-mapped IPv6 (`::ffff:10.0.0.1`) as IPv4, lower case, never empty. */
function normalizeAddress(address: string | undefined): string {
  const value = (address ?? "").toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(value);
  return mapped ? (mapped[1] as string) : value || "unknown";
}
