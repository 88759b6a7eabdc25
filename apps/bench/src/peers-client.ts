import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { textOf } from "./client";

/** The peers section's clients: how one connects to a gateway, as data a worker thread can be handed. */

const HUGE_BYTES = 20_000;

export type Payload = "echo" | "20KB";

/** One client of a gateway: an SDK 1.x client over `wire` (or code mode's `call_tool`), codemux's REST route, or the server direct. */
export type ClientSpec =
  | { kind: "mcp"; url: string; wire: "streamable" | "sse"; headers?: Record<string, string>; codeMode?: boolean }
  | { kind: "rest"; base: string; headers: Record<string, string> }
  | { kind: "stdio"; command: string; args: string[] };

export interface PeerClient {
  /** Makes one call and checks its answer. */
  call: (payload: Payload, tag: string) => Promise<boolean>;
  close: () => Promise<void>;
}

const argsOf = (payload: Payload, tag: string) => (payload === "echo" ? { text: tag } : { bytes: HUGE_BYTES });
const rightAnswer = (payload: Payload, tag: string, text: string) => (payload === "echo" ? text === tag : text.length === HUGE_BYTES);

const endsWith = (tools: string[], base: string) => {
  const name = tools.find((t) => t === base || t.endsWith(`__${base}`) || t.endsWith(`_${base}`) || t.endsWith(`.${base}`));
  if (!name) throw new Error(`no tool named like ${base} among ${tools.join(", ")}`);
  return name;
};

/**
 * fetch, with each POST left without the transport's one long-lived signal: undici keeps an abort listener on that signal
 * per fetch until the request is collected, and thousands of them (with a warning printed for each past 1,500) made every
 * call of the bench's own client slower, the gateway's p50 with it. The GET stream keeps the signal (closing ends it).
 */
const postsUnsignalled = (input: string | URL, init: RequestInit = {}): Promise<Response> => {
  if (init.method !== "POST") return fetch(input, init);
  const { signal: _signal, ...rest } = init;
  return fetch(input, rest);
};

/** An SDK 1.x client over `wire`; tools named as the gateway names echo / huge, or called through code mode's call_tool. */
async function mcpConnect({ url, wire, headers = {}, codeMode = false }: Extract<ClientSpec, { kind: "mcp" }>): Promise<PeerClient> {
  const client = new Client({ name: "codemux-bench-peers", version: "1.0.0" });
  const transport =
    wire === "streamable"
      ? new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers }, fetch: postsUnsignalled })
      : new SSEClientTransport(new URL(url), {
          requestInit: { headers },
          fetch: postsUnsignalled,
          eventSourceInit: { fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } }) },
        });
  await client.connect(transport);
  const names = codeMode ? [] : (await client.listTools()).tools.map((t) => t.name);
  const echo = codeMode ? "m__echo" : endsWith(names, "echo");
  const huge = codeMode ? "m__huge" : endsWith(names, "huge");
  return {
    call: async (payload, tag) => {
      const name = payload === "echo" ? echo : huge;
      const result = codeMode
        ? await client.callTool({ name: "call_tool", arguments: { name, args: argsOf(payload, tag) } })
        : await client.callTool({ name, arguments: argsOf(payload, tag) });
      return rightAnswer(payload, tag, textOf(result));
    },
    close: () => client.close(),
  };
}

function restClient({ base, headers }: Extract<ClientSpec, { kind: "rest" }>): PeerClient {
  return {
    call: async (payload, tag) => {
      const res = await fetch(`${base}/v1/tools/m__${payload === "echo" ? "echo" : "huge"}/call`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify(argsOf(payload, tag)),
      });
      if (!res.ok) throw new Error(`REST answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
      const { value } = (await res.json()) as { value: unknown };
      return rightAnswer(payload, tag, typeof value === "string" ? value : textOf(value));
    },
    close: async () => undefined,
  };
}

async function stdioClient({ command, args }: Extract<ClientSpec, { kind: "stdio" }>): Promise<PeerClient> {
  const client = new Client({ name: "codemux-bench-peers", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command, args, stderr: "ignore" }));
  return {
    call: async (payload, tag) =>
      rightAnswer(payload, tag, textOf(await client.callTool({ name: payload === "echo" ? "echo" : "huge", arguments: argsOf(payload, tag) }))),
    close: () => client.close(),
  };
}

export const connectTo = async (spec: ClientSpec): Promise<PeerClient> =>
  spec.kind === "rest" ? restClient(spec) : spec.kind === "stdio" ? stdioClient(spec) : mcpConnect(spec);

/** How long a closed loop runs: each client `calls` times, or all of them for `seconds`. */
export type LoopBudget = { calls: number; seconds?: undefined } | { seconds: number; calls?: undefined };

/** What a set of clients did in a closed loop: each call's time in ms, and the failed or wrong ones. */
export interface LoopResult {
  times: number[];
  errors: number;
  firstError?: string;
}

/**
 * Connects `clients` clients (one refused counts as an error and takes no part), warms them up for `warmSeconds` (at least
 * 5 calls each) and returns `run`, which makes them call in a closed loop, each `calls` times or all for `seconds`.
 */
export async function closedLoop(
  spec: ClientSpec,
  clients: number,
  { payload, warmSeconds, prefix = "" }: { payload: Payload; warmSeconds: number; prefix?: string },
) {
  const result: LoopResult = { times: [], errors: 0 };
  const fail = (error: unknown) => {
    result.errors++;
    result.firstError ??= error instanceof Error ? error.message.slice(0, 200) : String(error);
  };
  const opened = await Promise.all(Array.from({ length: clients }, () => connectTo(spec).catch((error: unknown) => (fail(error), undefined))));
  const conns = opened.filter((c) => c !== undefined);
  // Warm-up, the same for every gateway: the figures are the steady state of a gateway that runs for days (its JIT has
  // compiled the call path), not its first thousand calls.
  const warmUntil = performance.now() + warmSeconds * 1000;
  await Promise.all(
    conns.map(async (c, n) => {
      for (let i = 0; i < 5 || performance.now() < warmUntil; i++) await c.call(payload, `w${prefix}${n}-${i}`).catch(() => false);
    }),
  );
  const run = async (until: LoopBudget): Promise<LoopResult> => {
    const deadline = performance.now() + (until.seconds ?? 0) * 1000;
    await Promise.all(
      conns.map(async (c, n) => {
        for (let i = 0; until.calls !== undefined ? i < until.calls : performance.now() < deadline; i++) {
          const s = performance.now();
          try {
            if (!(await c.call(payload, `c${prefix}${n}-${i}`))) throw new Error("wrong answer");
            result.times.push(performance.now() - s);
          } catch (error) {
            fail(error);
          }
        }
      }),
    );
    return result;
  };
  const close = () => Promise.all(conns.map((c) => c.close().catch(() => undefined)));
  return { run, close };
}
