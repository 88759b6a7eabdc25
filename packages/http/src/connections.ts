import type { IncomingMessage } from "node:http";
import { BlockList, isIP, type Socket } from "node:net";
import { HttpError } from "./errors";

/** X-Forwarded-For is read from its end, at most this many hops and characters: a long header costs no more. */
const MAX_FORWARDED_HOPS = 20;
const MAX_FORWARDED_CHARS = 2048;

/** Connections past an address's limit that may wait at once, per address, for their first request (a health probe, or a request that may borrow a place). */
const MAX_WAITING_PER_ADDRESS = 4;
/** How long borrowing stops after an address within its share found the room kept for others in use. */
export const CONNECTION_CONTENTION_MS = 60_000;
/** How long such a connection may take to send its request's headers before it is refused. */
const WAITING_MS = 2_000;

export interface ConnectionGuardOptions {
  /** Open connections one client address may hold while another address waits (its share). */
  maxPerAddress: number;
  /** Open connections in all (the server's limit): with it, an address may borrow past its share while a share's room stays free. */
  maxConnections?: number;
  /** Peers (addresses or CIDR ranges) whose X-Forwarded-For names the client. */
  trustedProxies: readonly string[];
  /** A connection with no authenticated request after this long is closed. */
  authTimeoutMs: number;
  /** Called for each connection refused at the limit or closed at the deadline. */
  onRefused?: (reason: "per_address" | "auth_timeout") => void;
  /** Called for each idle keep-alive connection closed to make room for a new one of its address. */
  onIdleClosed?: () => void;
}

/** What `admit` decided for a request: its client address, and whether its connection must close after the answer. */
export interface Admission {
  client: string;
  /** A health probe answered past its address's limit: its connection is not kept. */
  close: boolean;
}

/**
 * Keeps one client from taking every connection: each client address holds at most `maxPerAddress`
 * open connections (the address is the peer's, or for a trusted proxy the client its
 * X-Forwarded-For names), and a connection that has sent no authenticated request within
 * `authTimeoutMs` is closed, so trickling unauthenticated connections cannot pile up. At the limit,
 * the address's longest idle keep-alive connection is closed to make room before a new one is
 * refused, and a health probe (`/healthz`, `/readyz`) is answered on a connection past the limit:
 * a few such connections per address may wait briefly for their first request to say what it is.
 */
export class ConnectionGuard {
  readonly #options: ConnectionGuardOptions;
  readonly #trusted: BlockList;
  /** False without `--trusted-proxy`: no address is then checked against the list (the check builds a SocketAddress each time). */
  readonly #anyTrusted: boolean;
  readonly #open = new Map<string, Set<Socket>>();
  /** The address each connection counts against (none yet for a trusted proxy's before its first request, or one past the limit). */
  readonly #owner = new WeakMap<Socket, string>();
  /** Requests being answered on a connection. */
  readonly #active = new WeakMap<Socket, number>();
  /** When a connection's last answer ended with none other running: it is kept alive, idle. Unset before its first request. */
  readonly #idleSince = new WeakMap<Socket, number>();
  readonly #deadlines = new WeakMap<Socket, NodeJS.Timeout>();
  readonly #refused = new WeakSet<Socket>();
  /** Connections past their address's limit, waiting for their first request; and how many wait per address. */
  readonly #waiting = new WeakMap<Socket, { address: string; timer: NodeJS.Timeout }>();
  readonly #waitingPerAddress = new Map<string, number>();
  /** Connections counted against an address, in all. */
  #total = 0;
  /** Until when no address borrows (see `admit`). */
  #contendedUntil = Number.NEGATIVE_INFINITY;

  constructor(options: ConnectionGuardOptions) {
    this.#options = options;
    this.#trusted = trustedProxyList(options.trustedProxies);
    this.#anyTrusted = options.trustedProxies.length > 0;
  }

  /** A new connection: given its deadline, counted against its peer (a trusted proxy's waits for its requests), or made to wait or refused past the limit. */
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
      this.#stopWaiting(socket);
    });
    const peer = normalizeAddress(socket.remoteAddress);
    if (this.#isTrusted(peer) || this.#take(socket, peer)) return;
    const waiting = this.#waitingPerAddress.get(peer) ?? 0;
    if (waiting >= MAX_WAITING_PER_ADDRESS) return this.#refuse(socket, peer);
    this.#waitingPerAddress.set(peer, waiting + 1);
    const timer = setTimeout(() => {
      this.#stopWaiting(socket);
      this.#refuse(socket, peer);
    }, WAITING_MS);
    timer.unref();
    this.#waiting.set(socket, { address: peer, timer });
  }

  /** True for a connection refused unread: its requests are not answered. */
  refused(socket: Socket): boolean {
    return this.#refused.has(socket);
  }

  /** The client address of a request: the peer's, or for a trusted proxy the client its X-Forwarded-For names. */
  clientOf(req: IncomingMessage): string {
    const peer = normalizeAddress(req.socket.remoteAddress);
    if (!this.#isTrusted(peer)) return peer;
    return this.#forwardedClient(req.headers["x-forwarded-for"]) ?? peer;
  }

  /**
   * A request begins on its connection. The connection counts against the request's client (for a
   * trusted proxy, the one its X-Forwarded-For names, whose count it then joins). Past that client's
   * share the connection borrows a place while no other address waits for one (see `#borrow`); else a
   * health probe is still answered, on a connection closed after it, and anything else gets a 429 that
   * closes the connection. `done` must follow every admitted request.
   */
  admit(req: IncomingMessage, health: boolean): Admission {
    const socket = req.socket;
    const client = this.clientOf(req);
    this.#stopWaiting(socket);
    let close = false;
    if (this.#owner.get(socket) !== client) {
      this.#release(socket);
      if (!this.#take(socket, client) && (health || !this.#borrow(socket, client))) {
        if (!health) {
          this.#options.onRefused?.("per_address");
          throw new HttpError("QUOTA", this.#refusal(client), { headers: { connection: "close", "retry-after": "5" } });
        }
        close = true;
      }
    }
    this.#active.set(socket, (this.#active.get(socket) ?? 0) + 1);
    this.#idleSince.delete(socket);
    return { client, close };
  }

  /** The answer to an admitted request ended: with none other running, its connection is idle from now. */
  done(socket: Socket): void {
    const active = (this.#active.get(socket) ?? 1) - 1;
    this.#active.set(socket, active);
    if (active === 0) this.#idleSince.set(socket, performance.now());
  }

  /** The connection carried an authenticated request: its deadline is lifted. */
  authenticated(socket: Socket): void {
    clearTimeout(this.#deadlines.get(socket));
  }

  #refusal(address: string): string {
    const max = this.#options.maxPerAddress;
    const open = Math.max(max, this.#open.get(address)?.size ?? 0);
    return `Too many connections from ${address}: ${open} are open and none is idle (connections per address: ${max}). Retry shortly. If many clients share this address, raise http.limits.connectionsPerAddress in the config; behind a reverse proxy, start codemux with --trusted-proxy PROXY_ADDRESS so that each client counts on its own.`;
  }

  /** Answered and closed before a byte is read: a refused connection holds nothing while it trickles. */
  #refuse(socket: Socket, address: string): void {
    this.#options.onRefused?.("per_address");
    this.#refused.add(socket);
    const body = JSON.stringify({ error: { code: "quota", message: this.#refusal(address) } });
    socket.end(
      `HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json; charset=utf-8\r\nretry-after: 5\r\nconnection: close\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    socket.once("finish", () => socket.destroy());
  }

  /** Counts `socket` against `address`; at the limit, closes the address's longest idle keep-alive connection first. */
  #take(socket: Socket, address: string): boolean {
    const max = this.#options.maxPerAddress;
    const open = this.#open.get(address);
    if ((open?.size ?? 0) >= max && !(open && this.#closeIdle(open))) return false;
    if (this.#total >= this.#reserveFrom()) {
      // An address within its share uses the room kept for others: borrowing stops, and an idle borrowed place is taken back.
      this.#contendedUntil = performance.now() + CONNECTION_CONTENTION_MS;
      this.#reclaim();
    }
    this.#count(socket, address);
    return true;
  }

  /**
   * Counts a connection past its address's share, which is work-conserving: a client whose request
   * arrived (trickling headers never get here) may take a free place while the room of one share
   * stays free for other addresses and none of them used that room within `CONNECTION_CONTENTION_MS`.
   */
  #borrow(socket: Socket, address: string): boolean {
    if (this.#options.maxConnections === undefined || performance.now() < this.#contendedUntil || this.#total >= this.#reserveFrom()) return false;
    this.#count(socket, address);
    return true;
  }

  /** Connections in all past which the rest is kept for addresses within their share. */
  #reserveFrom(): number {
    const { maxConnections, maxPerAddress } = this.#options;
    return maxConnections === undefined ? Number.POSITIVE_INFINITY : maxConnections - maxPerAddress;
  }

  #count(socket: Socket, address: string): void {
    let open = this.#open.get(address);
    if (open === undefined) this.#open.set(address, (open = new Set()));
    open.add(socket);
    this.#owner.set(socket, address);
    this.#total++;
  }

  /** Closes the longest idle connection of an address past its share; false when there is none. */
  #reclaim(): boolean {
    const over = [...this.#open.values()].filter((open) => open.size > this.#options.maxPerAddress);
    return this.#closeIdle(over.flatMap((open) => [...open]));
  }

  /** Closes the connection of `open` idle the longest (one that answered a request and runs none now); false when none is idle. */
  #closeIdle(open: Iterable<Socket>): boolean {
    let oldest: Socket | undefined;
    let oldestSince = Number.POSITIVE_INFINITY;
    for (const socket of open) {
      const since = this.#idleSince.get(socket);
      if (since !== undefined && since < oldestSince) {
        oldest = socket;
        oldestSince = since;
      }
    }
    if (oldest === undefined) return false;
    this.#release(oldest);
    oldest.destroy();
    this.#options.onIdleClosed?.();
    return true;
  }

  #release(socket: Socket): void {
    const address = this.#owner.get(socket);
    if (address === undefined) return;
    this.#owner.delete(socket);
    const open = this.#open.get(address);
    if (open?.delete(socket)) this.#total--;
    if (open?.size === 0) this.#open.delete(address);
  }

  #stopWaiting(socket: Socket): void {
    const waiting = this.#waiting.get(socket);
    if (waiting === undefined) return;
    this.#waiting.delete(socket);
    clearTimeout(waiting.timer);
    const left = (this.#waitingPerAddress.get(waiting.address) ?? 1) - 1;
    if (left > 0) this.#waitingPerAddress.set(waiting.address, left);
    else this.#waitingPerAddress.delete(waiting.address);
  }

  #isTrusted(address: string): boolean {
    if (!this.#anyTrusted) return false;
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
