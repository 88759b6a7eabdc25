import { ProtocolError, SdkError, SdkErrorCode, STDIO_DEFAULT_MAX_BUFFER_SIZE } from "@modelcontextprotocol/client";
import type { ChildProcess } from "node:child_process";
import { getEventListeners } from "node:events";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { isPlainCallToolResult } from "../src/lane-channel";
import { ChannelClient } from "../src/sdk-channel";
import { CallCancelledError, CallTimeoutError, DownstreamError, ServerDisconnectedError, ServerPool, type PoolOptions, type ServerSpec } from "../src/index";
import { httpSpec, startHttpServer, stdioSpec, textOf } from "./helpers";
import { modernServerPath } from "@codemux/test-servers";

const rawServerPath = fileURLToPath(new URL("./fixtures/raw-server.mjs", import.meta.url));
const pools: ServerPool[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
  for (const child of children.splice(0)) child.kill();
});

async function startPool(specs: ServerSpec[], options: PoolOptions = {}): Promise<ServerPool> {
  const pool = new ServerPool(specs, { retryDelaysMs: [], ...options });
  pools.push(pool);
  await pool.start();
  return pool;
}

const rawSpec = (name: string, extra: Partial<ServerSpec> = {}): ServerSpec => ({
  name,
  transport: { type: "stdio", command: process.execPath, args: [rawServerPath], env: {} },
  callTimeoutMs: 10_000,
  connectTimeoutMs: 10_000,
  tools: {},
  ...extra,
});

/** What the misbehaving server saw: notifications/cancelled received, and the calls they stopped. */
async function cancellations(pool: ServerPool, server: string): Promise<{ count: number; requestIds: unknown[]; notices: number }> {
  return JSON.parse(textOf(await pool.callTool(server, "cancellations")));
}

/** The request id the server saw for one call: a lane id (`codemux-1`) or the SDK client's number. */
async function requestId(pool: ServerPool, server: string): Promise<unknown> {
  return JSON.parse(textOf(await pool.callTool(server, "request-id")));
}

// The SDK's semantics, held on both channels whatever CODEMUX_CALL_LANE says: the lane must answer as the SDK does.
describe.each([
  { channel: "the call lane", callLane: true, ids: expect.stringMatching(/^codemux-\d+$/) },
  { channel: "the SDK client", callLane: false, ids: expect.any(Number) },
])("tools/call on stdio through $channel", ({ callLane, ids }) => {
  const start = (specs: ServerSpec[]) => startPool(specs, { callLane });

  it("times out as the SDK does and cancels the call downstream exactly once", async () => {
    const pool = await start([stdioSpec("m", [], { callTimeoutMs: 300 })]);
    const error = await pool.callTool("m", "hang").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CallTimeoutError);
    expect((error as CallTimeoutError).cause).toMatchObject({ code: SdkErrorCode.RequestTimeout, data: { timeout: 300 } });
    expect((error as CallTimeoutError).message).toMatch(/timed out after 300 ms/);
    const seen = await cancellations(pool, "m");
    expect(seen).toMatchObject({ count: 1, notices: 1 });
    expect(seen.requestIds[0]).toEqual(ids);
  });

  it("times each call out on its own deadline: a short timeout after a long one still ends first", async () => {
    const pool = await start([stdioSpec("m")]);
    const ended: string[] = [];
    const track = (label: string, call: Promise<unknown>) =>
      call.then(
        () => ended.push(`${label} answered`),
        (error: unknown) => ended.push(`${label} ${(error as Error).constructor.name}`),
      );
    const long = track("long", pool.callTool("m", "hang", {}, { timeoutMs: 1500 }));
    const short = track("short", pool.callTool("m", "hang", {}, { timeoutMs: 200 }));
    const quick = track("echo", pool.callTool("m", "echo", { text: "x" }));
    await Promise.all([long, short, quick]);
    expect(ended.filter((e) => !e.startsWith("echo"))).toEqual(["short CallTimeoutError", "long CallTimeoutError"]);
    expect(ended).toContain("echo answered");
    expect((await cancellations(pool, "m")).count).toBe(2);
  });

  it("resets the timeout on progress and hands progress, in order, to onprogress before the answer", async () => {
    const pool = await start([stdioSpec("m", [], { callTimeoutMs: 400 })]);
    const progress: unknown[] = [];
    const result = await pool.callTool("m", "slow", { ms: 1200, steps: 8 }, { onprogress: (p) => progress.push(p) });
    expect(textOf(result)).toBe("slept 1200 ms");
    const all = Array.from({ length: 8 }, (_, i) => ({ progress: i + 1, total: 8 }));
    // Every one, also the last, read in the same chunk as the answer (sdk-channel.ts: answersAfterNotifications).
    expect(progress).toEqual(all);
    expect((await cancellations(pool, "m")).notices).toBe(0);
  });

  it("hands every progress to onprogress before the answer when the server writes them all at once", async () => {
    const pool = await start([rawSpec("r")]);
    const seen: string[] = [];
    const result = await pool.callTool("r", "progress", { steps: 5 }, { onprogress: (p) => seen.push(`progress ${p.progress}`) }).then((r) => {
      seen.push("answer");
      return r;
    });
    expect(textOf(result)).toBe("done");
    expect(seen).toEqual(["progress 1", "progress 2", "progress 3", "progress 4", "progress 5", "answer"]);
  });

  it("cancels on abort once, and sends nothing for calls that finished before the signal aborted", async () => {
    const pool = await start([stdioSpec("m")]);
    const shared = new AbortController();
    for (let i = 0; i < 20; i++) await pool.callTool("m", "echo", { text: `n${i}` }, { signal: shared.signal });
    // A settled call leaves no listener behind on its caller's signal.
    expect(getEventListeners(shared.signal, "abort")).toHaveLength(0);
    shared.abort();
    expect(await cancellations(pool, "m")).toMatchObject({ count: 0, notices: 0 });

    const controller = new AbortController();
    const call = pool.callTool("m", "hang", {}, { signal: controller.signal });
    // One round trip after it: the server has the hung call when the abort comes.
    await pool.callTool("m", "counter", {});
    controller.abort(new Error("the user gave up"));
    await expect(call).rejects.toBeInstanceOf(CallCancelledError);
    controller.abort();
    const seen = await cancellations(pool, "m");
    expect(seen).toMatchObject({ count: 1, notices: 1 });
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("does not send a call whose signal aborted before it started", async () => {
    const pool = await start([stdioSpec("m")]);
    const before = JSON.parse(textOf(await pool.callTool("m", "counter"))).calls as number;
    await expect(pool.callTool("m", "echo", { text: "x" }, { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(CallCancelledError);
    expect(JSON.parse(textOf(await pool.callTool("m", "counter"))).calls).toBe(before + 1);
    expect((await cancellations(pool, "m")).notices).toBe(0);
  });

  it("turns a JSON-RPC error answer into the same DownstreamError as the SDK path", async () => {
    const pool = await start([stdioSpec("m"), rawSpec("r")]);
    const thrown = await pool.callTool("m", "throw", { message: "no such file" }).catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(DownstreamError);
    expect((thrown as DownstreamError).message).toBe("m__throw failed: no such file");
    const coded = (await pool
      .callTool("r", "error", { code: -32602, message: "bad arguments", data: { field: "path" } })
      .catch((e: unknown) => e)) as DownstreamError;
    expect(coded).toBeInstanceOf(DownstreamError);
    expect(coded.data).toMatchObject({ rpcCode: -32602 });
    expect(coded.cause).toMatchObject({ code: -32602, data: { field: "path" } });
    expect(coded.message).toBe("r__error failed: bad arguments");
  });

  it("takes a result past the SDK's 10 MiB stdio limit: codemux's own transport carries stdio, with its own bound", async () => {
    const pool = await start([stdioSpec("m")]);
    const bytes = STDIO_DEFAULT_MAX_BUFFER_SIZE + 1024 * 1024;
    expect(textOf(await pool.callTool("m", "huge", { bytes })).length).toBeGreaterThanOrEqual(bytes);
  });

  it("fails every call in flight with ServerDisconnectedError when the server dies mid-call", async () => {
    const pool = await start([stdioSpec("m")]);
    const hung = [pool.callTool("m", "hang"), pool.callTool("m", "hang")];
    const crash = pool.callTool("m", "crash", { code: 9 });
    for (const call of [...hung, crash]) {
      const error = await call.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ServerDisconnectedError);
      expect((error as Error).message).toMatch(/the process exited with code 9/);
      expect((error as Error).cause).toMatchObject({ code: SdkErrorCode.ConnectionClosed });
    }
    expect(textOf(await pool.callTool("m", "echo", { text: "back" }))).toBe("back");
  });
});

// What only the lane does, and what it must keep apart from the SDK client running beside it.
describe("the call lane (stdio)", () => {
  it("is on by default and off with callLane: false or CODEMUX_CALL_LANE=0, where the SDK client sends tools/call", async () => {
    const lane = expect.stringMatching(/^codemux-\d+$/);
    const { CODEMUX_CALL_LANE: _, ...unset } = process.env;
    const withLane = (value: string) => ({ ...unset, CODEMUX_CALL_LANE: value });
    const cases: Array<[PoolOptions, unknown]> = [
      [{ env: unset }, lane],
      [{ env: withLane("1") }, lane],
      [{ callLane: false, env: unset }, expect.any(Number)],
      [{ env: withLane("0") }, expect.any(Number)],
      [{ env: withLane(" Off ") }, expect.any(Number)],
      // The option, when given, is the embedder's choice: it wins over the environment.
      [{ callLane: true, env: withLane("0") }, lane],
    ];
    for (const [options, id] of cases) {
      const pool = await startPool([rawSpec("r")], options);
      expect(await requestId(pool, "r"), JSON.stringify(options)).toEqual(id);
    }
    // Without an `env` option, the variable is read from the process's own environment.
    const saved = process.env.CODEMUX_CALL_LANE;
    process.env.CODEMUX_CALL_LANE = "0";
    try {
      expect(await requestId(await startPool([rawSpec("r")]), "r")).toEqual(expect.any(Number));
    } finally {
      if (saved === undefined) delete process.env.CODEMUX_CALL_LANE;
      else process.env.CODEMUX_CALL_LANE = saved;
    }
  });

  // The SDK client drops progress that arrives in the same read as its answer (it hands progress over a microtask late).
  it("passes progress messages through, and survives an onprogress that throws", async () => {
    const pool = await startPool([rawSpec("r")], { callLane: true });
    const progress: unknown[] = [];
    const result = await pool.callTool(
      "r",
      "progress",
      { steps: 2 },
      {
        onprogress: (p) => {
          progress.push(p);
          throw new Error("a broken listener");
        },
      },
    );
    expect(textOf(result)).toBe("done");
    expect(progress).toEqual([
      { progress: 1, total: 2, message: "step 1" },
      { progress: 2, total: 2, message: "step 2" },
    ]);
  });

  it("calls sharing one signal put one abort listener on it, and its abort cancels each of them downstream", async () => {
    const pool = await startPool([stdioSpec("m")], { callLane: true });
    const controller = new AbortController();
    const hung = Array.from({ length: 20 }, () => pool.callTool("m", "hang", {}, { signal: controller.signal }));
    const answered = Array.from({ length: 20 }, (_, i) => pool.callTool("m", "echo", { text: `e${i}` }, { signal: controller.signal }));
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
    expect((await Promise.all(answered)).map(textOf)).toEqual(Array.from({ length: 20 }, (_, i) => `e${i}`));
    // One round trip after them: the server has the hung calls when the abort comes.
    await pool.callTool("m", "counter", {});
    controller.abort(new Error("the run ended"));
    for (const call of hung) await expect(call).rejects.toBeInstanceOf(CallCancelledError);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    expect(await cancellations(pool, "m")).toMatchObject({ count: 20, notices: 20 });
  });

  it("answers exactly what the SDK's own request path answers, for plain, unusual, large and invalid results", async () => {
    const pool = await startPool([rawSpec("r")], { callLane: true });
    // The same connection's SDK client: its numeric ids run next to the lane's, on the same server.
    const client = await pool.client("r");
    const image = { type: "image", data: Buffer.from("png").toString("base64"), mimeType: "image/png" };
    const shapes: unknown[] = [
      { content: [{ type: "text", text: "plain" }] },
      { content: [{ type: "text", text: "bad" }], isError: true },
      { content: [{ type: "text", text: "{}" }], structuredContent: { n: 1, deep: { list: [1, 2] } } },
      { content: [] },
      { content: [{ type: "text", text: "x".repeat(3_000_000) }] },
      { content: [image, { type: "text", text: "t", annotations: { audience: ["user"], priority: 0.5 } }] },
      { content: [{ type: "text", text: "t", extra: "dropped by the schema" }] },
      { content: [{ type: "text", text: "meta" }], _meta: { "vendor/trace": "abc" } },
      { content: [{ type: "text", text: "more" }], vendorKey: { kept: true } },
      {},
      { isError: false },
      // Invalid: the schema refuses each, on both paths.
      { content: "not an array" },
      { content: [{ type: "text", text: 5 }] },
      { content: [{ type: "image", data: "not base64!", mimeType: "image/png" }] },
      { content: [], isError: "yes" },
      { content: [], structuredContent: [1, 2] },
      // The 2025 codec's own rules: another result family is no empty tools/call success; a resultType is stripped.
      { task: { taskId: "t", status: "working" } },
      { content: [{ type: "text", text: "r" }], resultType: "complete" },
      // (A result that is not an object is no JSON-RPC answer at all: the transport drops it, on both paths.)
    ];
    for (const result of shapes) {
      const [viaLane, viaSdk] = await Promise.all([
        pool.callTool("r", "shape", { result }).then(
          (ok) => ({ ok }),
          (error: Error) => ({ error: describe_(error.cause) }),
        ),
        client.request({ method: "tools/call", params: { name: "shape", arguments: { result } } }).then(
          (ok) => ({ ok }),
          (error: unknown) => ({ error: describe_(error) }),
        ),
      ]);
      expect(viaLane, JSON.stringify(result).slice(0, 200)).toEqual(viaSdk);
    }
  });

  it("keeps its ids apart from the SDK client's: interleaved calls on both paths each get their own answer", async () => {
    const pool = await startPool([rawSpec("r")], { callLane: true });
    const client = await pool.client("r");
    const calls = Array.from({ length: 100 }, (_, i) =>
      i % 2 === 0
        ? pool.callTool("r", "echo", { text: `lane ${i}` })
        : client.request({ method: "tools/call", params: { name: "echo", arguments: { text: `sdk ${i}` } } }),
    );
    const texts = (await Promise.all(calls)).map(textOf);
    expect(texts).toEqual(Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? `lane ${i}` : `sdk ${i}`)));
  });
});

describe.each([{ callLane: true }, { callLane: false }])("the downstream era (callLane: $callLane)", ({ callLane }) => {
  it("of a 2025 server is found by the probe: server/discover refused, then initialize, and no 2026 _meta envelope on a call", async () => {
    const pool = await startPool([rawSpec("r")], { callLane });
    await pool.callTool("r", "echo", { text: "x" });
    const seen = JSON.parse(textOf(await pool.callTool("r", "seen"))) as Array<{ method: string; protocolVersion?: string; meta: string[] }>;
    expect(seen.slice(0, 2)).toMatchObject([{ method: "server/discover" }, { method: "initialize", protocolVersion: "2025-11-25" }]);
    for (const request of seen.slice(1)) expect(request.meta.filter((key) => key.startsWith("io.modelcontextprotocol/"))).toEqual([]);
  });

  it("of a 2026 server takes the lane too when it is on: its calls carry the lane's progress tokens, else the SDK's numbers", async () => {
    const pool = await startPool(
      [{ ...rawSpec("m"), transport: { type: "stdio", command: process.execPath, args: [modernServerPath, "--legacy", "reject"], env: {} } }],
      { callLane },
    );
    const seen = JSON.parse(textOf(await pool.callTool("m", "whoami")));
    expect(seen).toMatchObject({ era: "modern" });
    expect(seen.progressToken).toEqual(callLane ? expect.stringMatching(/^codemux-\d+$/) : expect.any(Number));
    expect(pool.status()[0]?.protocol).toBe("2026-07-28");
  });
});

describe("tools/call over HTTP (the SDK path)", () => {
  it("sends no cancellation for calls that finished before their signal aborted", async () => {
    const url = await startHttpServer(children);
    const pool = await startPool([httpSpec("h", `${url}/mcp`)]);
    const shared = new AbortController();
    for (let i = 0; i < 5; i++) await pool.callTool("h", "echo", { text: `n${i}` }, { signal: shared.signal });
    expect(getEventListeners(shared.signal, "abort")).toHaveLength(0);
    shared.abort();
    expect((await cancellations(pool, "h")).count).toBe(0);
  });
});

describe("isPlainCallToolResult", () => {
  it("accepts only what the client's 2025 codec returns unchanged", () => {
    const client = new ChannelClient({ name: "test", version: "1" });
    const accepted = [{ content: [] }, { content: [{ type: "text", text: "a" }], isError: true, structuredContent: {} }];
    const refused = [
      {},
      { content: [{ type: "image", data: "", mimeType: "x" }] },
      { content: [{ type: "text", text: "a", annotations: {} }] },
      { content: [], _meta: {} },
      { content: [], other: 1 },
      { content: [], isError: undefined },
      { content: [null] },
      [],
      null,
    ];
    for (const value of accepted) {
      expect(isPlainCallToolResult(value)).toBe(true);
      expect(client.checkCallToolResult(value)).toEqual(value);
    }
    for (const value of refused) expect(isPlainCallToolResult(value), JSON.stringify(value)).toBe(false);
  });
});

function describe_(error: unknown): unknown {
  if (error instanceof ProtocolError || error instanceof SdkError) return { code: error.code, message: error.message, data: error.data };
  return { name: (error as Error)?.name, message: (error as Error)?.message };
}
