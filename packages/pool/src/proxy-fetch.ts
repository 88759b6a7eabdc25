import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type RequestOptions } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest, type AgentOptions } from "node:https";
import { isIP, type Socket } from "node:net";
import { PassThrough, Readable, type Duplex } from "node:stream";
import { connect as tlsConnect, type TLSSocket } from "node:tls";

type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

interface ProxyTarget {
  url: URL;
  authorization: string | undefined;
}

/** Opens each HTTPS connection as a CONNECT tunnel through the proxy; kept alive and reused like any agent's sockets. */
class TunnelAgent extends HttpsAgent {
  constructor(
    readonly proxy: ProxyTarget,
    options: AgentOptions,
  ) {
    super(options);
  }

  // Node's Agent accepts a socket given later through the callback.
  override createConnection(options: RequestOptions & { servername?: string }, callback?: (error: Error | null, stream: Duplex) => void): undefined {
    const done = callback ?? (() => undefined);
    const host = options.host ?? "localhost";
    const port = options.port ?? 443;
    const proxyPort = Number(this.proxy.url.port || (this.proxy.url.protocol === "https:" ? 443 : 80));
    const open = this.proxy.url.protocol === "https:" ? httpsRequest : httpRequest;
    const tunnel = open({
      host: this.proxy.url.hostname,
      port: proxyPort,
      method: "CONNECT",
      path: `${host}:${port}`,
      headers: { host: `${host}:${port}`, ...(this.proxy.authorization ? { "proxy-authorization": this.proxy.authorization } : {}) },
      agent: false,
    });
    tunnel.once("connect", (answer: IncomingMessage, socket: Socket) => {
      if (answer.statusCode !== 200) {
        socket.destroy();
        const message =
          `the proxy ${this.proxy.url.host} refused the tunnel to ${host}:${port}: HTTP ${answer.statusCode ?? "?"} ${answer.statusMessage ?? ""}`.trim();
        done(Object.assign(new Error(message), { code: "PROXY_CONNECT_FAILED" }), socket);
        return;
      }
      const secure: TLSSocket = tlsConnect({ ...(options as object), socket, ...(isIP(host) ? {} : { servername: options.servername ?? host }) });
      done(null, secure);
    });
    tunnel.once("error", (error) => done(error, new PassThrough()));
    tunnel.end();
    return undefined;
  }
}

/**
 * A fetch that goes through an HTTP proxy: plain requests in absolute form, HTTPS through CONNECT
 * tunnels, connections kept alive. Node's own fetch ignores HTTPS_PROXY. Failures are
 * `TypeError("fetch failed")` with the cause, as fetch reports them.
 */
export function createProxyFetch(proxyUrl: string): FetchLike {
  const url = new URL(proxyUrl);
  const proxy: ProxyTarget = {
    url,
    authorization: url.username
      ? `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString("base64")}`
      : undefined,
  };
  const plainAgent = url.protocol === "https:" ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
  const tunnelAgent = new TunnelAgent(proxy, { keepAlive: true });

  return async (input, init) => {
    const request = new Request(input, init);
    const target = new URL(request.url);
    const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
    const headers: Record<string, string> = Object.fromEntries(request.headers.entries());
    headers.host = target.host;
    if (body) headers["content-length"] = String(body.length);
    const signal = init?.signal ?? undefined;

    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const options: RequestOptions =
        target.protocol === "http:"
          ? {
              host: url.hostname,
              port: Number(url.port || (url.protocol === "https:" ? 443 : 80)),
              method: request.method,
              path: target.href,
              agent: plainAgent,
              headers: { ...headers, ...(proxy.authorization ? { "proxy-authorization": proxy.authorization } : {}) },
            }
          : {
              host: target.hostname,
              port: Number(target.port || 443),
              method: request.method,
              path: `${target.pathname}${target.search}`,
              agent: tunnelAgent,
              headers,
            };
      const send = target.protocol === "http:" ? (url.protocol === "https:" ? httpsRequest : httpRequest) : httpsRequest;
      const req = send(options, resolve);
      req.on("error", (error) => reject(signal?.aborted ? signal.reason : new TypeError("fetch failed", { cause: error })));
      signal?.addEventListener("abort", () => req.destroy(signal.reason as Error), { once: true });
      req.end(body);
    });

    const responseHeaders = new Headers();
    for (let i = 0; i < response.rawHeaders.length; i += 2) responseHeaders.append(response.rawHeaders[i]!, response.rawHeaders[i + 1]!);
    const status = response.statusCode ?? 502;
    const empty = status === 204 || status === 304 || request.method === "HEAD";
    signal?.addEventListener("abort", () => response.destroy(signal.reason as Error), { once: true });
    return new Response(empty ? null : (Readable.toWeb(response) as ReadableStream<Uint8Array>), {
      status,
      statusText: response.statusMessage ?? "",
      headers: responseHeaders,
    });
  };
}
