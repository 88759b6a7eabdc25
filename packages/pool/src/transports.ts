import { SSEClientTransport, StreamableHTTPClientTransport, type OAuthClientProvider, type Transport } from "@modelcontextprotocol/client";
import type { HttpTransportSpec, TlsSettings, TransportContext, TransportSpec } from "./config/types";
import type { TlsMaterial } from "./node-fetch";
import { oauthSettingsOf } from "./config/oauth-settings";
import { proxyFor } from "./proxy";
import { watchingStreams } from "./stream-requests";
import { traceCarrier, tracing } from "./tracing";
import { isLoopback, maskUrl, redactSecrets } from "@codemux/core";

type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** Makes a fresh transport for each connection attempt; tests pass their own (e.g. in-memory pairs). */
export type TransportFactory = (spec: TransportSpec, context: TransportContext) => Transport | Promise<Transport>;

/**
 * The default transports: stdio servers as child processes (loaded on first use, so that the root
 * entry never loads `child_process`), Streamable HTTP and SSE through the proxy the environment names.
 */
export const createTransport: TransportFactory = async (spec, context) => {
  if (spec.type === "stdio") {
    const { createStdioTransport } = await import("./stdio");
    return createStdioTransport(spec, context);
  }
  const fetch = tracedFetch(await fetchFor(spec, context));
  const authProvider = await authProviderFor(spec, context);
  const auth = authProvider ? { authProvider } : {};
  if (spec.type === "http") {
    const watched = context.streams ? watchingStreams(fetch, context.streams) : fetch;
    return new StreamableHTTPClientTransport(new URL(spec.url), { requestInit: { headers: spec.headers }, fetch: watched, ...auth });
  }
  return new SSEClientTransport(new URL(spec.url), {
    requestInit: { headers: spec.headers },
    fetch,
    ...auth,
    // The SSE stream is opened by EventSource, which does not take requestInit headers.
    eventSourceInit: { fetch: (url, init) => fetch(url, { ...init, headers: { ...headersOf(init), ...spec.headers } }) },
  });
};

async function fetchFor(spec: HttpTransportSpec, context: TransportContext): Promise<FetchLike> {
  const url = new URL(spec.url);
  if (url.protocol === "http:" && !isLoopback(url.hostname))
    context.logger.warn(
      `[${context.server}] connects over plain http:// to ${url.host}: its requests, tokens and results cross the network unencrypted; use an https:// URL (a private CA goes in the entry's tls.ca)`,
    );
  const proxy = proxyFor(spec.url, spec.proxy, context.env ?? process.env);
  if (!proxy && !spec.tls) return (input, init) => globalThis.fetch(input, init);
  if (proxy) context.logger.info(`[${context.server}] connecting via proxy ${maskUrl(proxy)}`);
  const [{ createNodeFetch }, tls] = await Promise.all([import("./node-fetch"), spec.tls ? readTls(spec.tls) : undefined]);
  return createNodeFetch({ ...(proxy ? { proxy } : {}), ...(tls ? { tls } : {}) });
}

/** The entry's certificate files, read at each connection attempt (so a renewed certificate is taken without a restart). */
async function readTls(tls: TlsSettings): Promise<TlsMaterial> {
  const { readFile } = await import("node:fs/promises");
  const read = async (field: keyof TlsSettings): Promise<Partial<TlsMaterial>> => {
    const path = tls[field];
    if (path === undefined) return {};
    try {
      return { [field]: await readFile(path) };
    } catch (error) {
      throw new Error(`cannot read tls.${field} ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  };
  const parts = await Promise.all([read("ca"), read("cert"), read("key")]);
  return Object.assign({}, ...parts) as TlsMaterial;
}

/**
 * The stored OAuth login of the server (`codemux auth login`) when it has one or an oauth block, unless its entry sends its
 * own Authorization header; for a principal's instance (per-principal credentials), that principal's own login, always.
 */
async function authProviderFor(spec: HttpTransportSpec, context: TransportContext): Promise<OAuthClientProvider | undefined> {
  if (Object.keys(spec.headers).some((h) => h.toLowerCase() === "authorization")) return undefined;
  const [{ FileOAuthProvider }, { hasAuthRecord, loginDirectory }] = await Promise.all([import("./auth/provider"), import("./auth/store")]);
  const dir = await loginDirectory(context.env ?? process.env, context.principal);
  const settings = oauthSettingsOf(spec);
  const provider = () => new FileOAuthProvider({ server: context.server, url: spec.url, dir, ...(settings ? { settings } : {}) });
  if (context.principal !== undefined) return provider();
  // Servers with neither an oauth block nor a login keep plain requests: a 401 there may ask for an API key, not OAuth.
  if (!spec.oauth && !(await hasAuthRecord(dir, context.server))) return undefined;
  return provider();
}

function headersOf(init: RequestInit | undefined): Record<string, string> {
  return Object.fromEntries(new Headers(init?.headers).entries());
}

/** One line naming the server's endpoint, safe to print: secrets in URLs and flags are masked; env and header values never appear. */
export function describeTransport(spec: TransportSpec): string {
  if (spec.type === "stdio") return redactSecrets([spec.command, ...spec.args].join(" "));
  const headers = Object.keys(spec.headers);
  return `${spec.type} ${maskUrl(spec.url)}${headers.length ? ` (headers: ${headers.join(", ")})` : ""}`;
}

/** Adds the active trace context's `traceparent`/`tracestate` headers to each request while tracing is on (one check per request otherwise). */
function tracedFetch(fetch: FetchLike): FetchLike {
  return (input, init) => {
    if (!tracing()) return fetch(input, init);
    const carrier = traceCarrier();
    if (carrier === undefined) return fetch(input, init);
    const headers = new Headers(init?.headers);
    for (const [name, value] of Object.entries(carrier)) headers.set(name, value);
    return fetch(input, { ...init, headers });
  };
}
