import { Agent, request as httpRequest, type IncomingMessage, type RequestOptions } from "node:http";
import { request as httpsRequest } from "node:https";
import { Readable } from "node:stream";
import { connect as tlsConnect } from "node:tls";
import type { Socket } from "node:net";

type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * A fetch that goes through an HTTP proxy: plain requests in absolute form, HTTPS through a
 * CONNECT tunnel. Node's own fetch ignores HTTPS_PROXY. Failures are `TypeError("fetch failed")`
 * with the cause, as fetch reports them.
 */
export function createProxyFetch(proxyUrl: string, tls: { ca?: string | Buffer } = {}): FetchLike {
  const proxy = new URL(proxyUrl);
  const proxyAuth = proxy.username ? `Basic ${Buffer.from(`${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`).toString("base64")}` : undefined;
  const proxyPort = Number(proxy.port || (proxy.protocol === "https:" ? 443 : 80));
  const connectProxy = proxy.protocol === "https:" ? httpsRequest : httpRequest;
  // Plain requests reuse connections to the proxy; each HTTPS request opens its own tunnel.
  const agent = proxy.protocol === "https:" ? undefined : new Agent({ keepAlive: true });

  return async (input, init) => {
    const request = new Request(input, init);
    const target = new URL(request.url);
    const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
    const headers: Record<string, string> = Object.fromEntries(request.headers.entries());
    headers.host = target.host;
    if (body) headers["content-length"] = String(body.length);
    const signal = init?.signal ?? undefined;
    const fail = (cause: unknown) => new TypeError("fetch failed", { cause });

    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const send = (options: RequestOptions, secure: boolean) => {
        const req = (secure ? httpsRequest : connectProxy)(options, resolve);
        req.on("error", (error) => reject(signal?.aborted ? signal.reason : fail(error)));
        signal?.addEventListener("abort", () => req.destroy(signal.reason as Error), { once: true });
        req.end(body);
      };
      if (target.protocol === "http:") {
        send({ host: proxy.hostname, port: proxyPort, method: request.method, path: target.href, ...(agent ? { agent } : {}), headers: { ...headers, ...(proxyAuth ? { "proxy-authorization": proxyAuth } : {}) } }, false);
        return;
      }
      const port = target.port || "443";
      const tunnel = connectProxy({
        host: proxy.hostname,
        port: proxyPort,
        method: "CONNECT",
        path: `${target.hostname}:${port}`,
        headers: { host: `${target.hostname}:${port}`, ...(proxyAuth ? { "proxy-authorization": proxyAuth } : {}) },
      });
      tunnel.once("connect", (answer: IncomingMessage, socket: Socket) => {
        if (answer.statusCode !== 200) {
          socket.destroy();
          reject(fail(Object.assign(new Error(`the proxy ${proxy.host} refused the tunnel to ${target.host}: HTTP ${answer.statusCode ?? "?"} ${answer.statusMessage ?? ""}`.trim()), { code: "PROXY_CONNECT_FAILED" })));
          return;
        }
        send({
          host: target.hostname,
          port: Number(port),
          method: request.method,
          path: `${target.pathname}${target.search}`,
          headers,
          agent: false,
          createConnection: () => tlsConnect({ socket, servername: target.hostname, ...(tls.ca ? { ca: tls.ca } : {}) }),
        }, true);
      });
      tunnel.on("error", (error) => reject(signal?.aborted ? signal.reason : fail(error)));
      signal?.addEventListener("abort", () => tunnel.destroy(signal.reason as Error), { once: true });
      tunnel.end();
    });

    const responseHeaders = new Headers();
    for (let i = 0; i < response.rawHeaders.length; i += 2) responseHeaders.append(response.rawHeaders[i]!, response.rawHeaders[i + 1]!);
    const status = response.statusCode ?? 502;
    const empty = status === 204 || status === 304 || request.method === "HEAD";
    signal?.addEventListener("abort", () => response.destroy(signal.reason as Error), { once: true });
    return new Response(empty ? null : (Readable.toWeb(response) as ReadableStream<Uint8Array>), { status, statusText: response.statusMessage ?? "", headers: responseHeaders });
  };
}
