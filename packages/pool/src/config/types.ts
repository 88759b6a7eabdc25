export interface StdioTransportSpec {
  type: "stdio";
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
}

export interface HttpTransportSpec {
  /** `http` is Streamable HTTP; `sse` the legacy HTTP+SSE transport. */
  type: "http" | "sse";
  url: string;
  headers: Record<string, string>;
}

export type TransportSpec = StdioTransportSpec | HttpTransportSpec;

export interface ToolFilter {
  allow?: string[];
  deny?: string[];
}

/** A validated downstream server, ready for the pool. */
export interface ServerSpec {
  name: string;
  transport: TransportSpec;
  callTimeoutMs: number;
  connectTimeoutMs: number;
  tools: ToolFilter;
  /** Set when the entry is valid JSON but cannot start (an unset variable): the server fails with this message. */
  problem?: string;
}

export interface PoolConfig {
  /** Where the config came from: a file path, "inline" or "built-in default". */
  source: string;
  servers: ServerSpec[];
}

export const DEFAULT_CALL_TIMEOUT_MS = 60_000;
export const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;
