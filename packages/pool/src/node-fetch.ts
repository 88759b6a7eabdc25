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

/** Certificates for HTTPS connections, as file contents: a CA to trust besides the system's, a client certificate and key. */
export interface TlsMaterial {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
}

/**
 * A fetch on Node's http/https modules, for what the global fetch cannot do without extra packages:
 * go through an HTTP proxy (plain requests in absolute form, HTTPS through CONNECT tunnels; Node's
 * own fetch ignores HTTPS_PROXY) and use a server's own certificates (`tls`). Connections are kept
 * alive. Failures are `TypeError("fetch failed")` with the cause, as fetch reports them.
 */
export function createNodeFetch(options: { proxy?: string; tls?: TlsMaterial }): FetchLike {
  const tls: AgentOptions = { keepAlive: true, ...options.tls };
  if (options.proxy === undefined) return directFetch(new HttpAgent({ keepAlive: true }), new HttpsAgent(tls));
  const url = new URL(options.proxy);
  const proxy: ProxyTarget = {
    url,
    authorization: url.username
      ? `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString("base64")}`
      : undefined,
  };
  const plainAgent = url.protocol === "https:" ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
  const tunnelAgent = new TunnelAgent(proxy, tls);
  return sendWith((target, request, headers) =>
    target.protocol === "http:"
      ? {
          send: url.protocol === "https:" ? httpsRequest : httpRequest,
          options: {
            host: url.hostname,
            port: Number(url.port || (url.protocol === "https:" ? 443 : 80)),
            method: request.method,
            path: target.href,
            agent: plainAgent,
            headers: { ...headers, ...(proxy.authorization ? { "proxy-authorization": proxy.authorization } : {}) },
          },
        }
      : {
          send: httpsRequest,
          options: {
            host: target.hostname,
            port: Number(target.port || 443),
            method: request.method,
            path: `${target.pathname}${target.search}`,
            agent: tunnelAgent,
            headers,
          },
        },
  );
}

/** Straight to the server, with the given agents (the https one carries the certificates). */
function directFetch(plain: HttpAgent, secure: HttpsAgent): FetchLike {
  return sendWith((target, request, headers) => {
    const https = target.protocol === "https:";
    return {
      send: https ? httpsRequest : httpRequest,
      options: {
        host: target.hostname,
        port: Number(target.port || (https ? 443 : 80)),
        method: request.method,
        path: `${target.pathname}${target.search}`,
        agent: https ? secure : plain,
        headers,
      },
    };
  });
}

type Route = (target: URL, request: Request, headers: Record<string, string>) => { send: typeof httpRequest; options: RequestOptions };

/** The fetch around one request function: the body read once, the answer as a streaming Response, abort passed on. */
function sendWith(route: Route): FetchLike {
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
      const { send, options } = route(target, request, headers);
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
