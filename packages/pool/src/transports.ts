import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { HttpTransportSpec, TransportSpec } from "./config/types";
import type { Logger } from "./logger";
import type { StderrRing } from "./stderr-ring";
import { ChildProcessTransport } from "./stdio-transport";

export interface TransportContext {
  server: string;
  stderr: StderrRing;
  logger: Logger;
}

/** Makes a fresh transport for each connection attempt; tests pass their own (e.g. in-memory pairs). */
export type TransportFactory = (spec: TransportSpec, context: TransportContext) => Transport;

export const createTransport: TransportFactory = (spec, context) => {
  switch (spec.type) {
    case "stdio":
      return new ChildProcessTransport(spec, {
        stderr: context.stderr,
        onNoise: (line) => context.logger.debug(`[${context.server}] ignored non-JSON stdout: ${line.slice(0, 200)}`),
      });
    case "http":
      return new StreamableHTTPClientTransport(new URL(spec.url), { requestInit: { headers: spec.headers } });
    case "sse":
      return new SSEClientTransport(new URL(spec.url), {
        requestInit: { headers: spec.headers },
        // The SSE stream is opened by EventSource, which does not take requestInit headers.
        eventSourceInit: { fetch: (url, init) => fetch(url, { ...init, headers: { ...headersOf(init), ...spec.headers } }) },
      });
  }
};

function headersOf(init: RequestInit | undefined): Record<string, string> {
  return Object.fromEntries(new Headers(init?.headers).entries());
}

export function describeTransport(spec: TransportSpec): string {
  return spec.type === "stdio" ? [spec.command, ...spec.args].join(" ") : `${spec.type} ${redactUrl(spec as HttpTransportSpec)}`;
}

function redactUrl(spec: HttpTransportSpec): string {
  const url = new URL(spec.url);
  if (url.password) url.password = "***";
  return url.toString();
}
