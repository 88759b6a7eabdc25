import { ProtocolError, SdkError, SdkErrorCode } from "@modelcontextprotocol/client";
import { modernServerPath, until } from "@codemux/test-servers";
import { getEventListeners } from "node:events";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { isPlainModernCallToolResult } from "../src/lane-channel";
import type { ChannelClient } from "../src/sdk-channel";
import {
  CallCancelledError,
  CallTimeoutError,
  DownstreamError,
  ServerDisconnectedError,
  ServerPool,
  type CallOptions,
  type PoolOptions,
  type ServerSpec,
} from "../src/index";
import { cleanedAfterEach, textOf } from "./helpers";

// The call lane before a 2026-07-28 stdio server (issue 48.3): the SDK client's request shape, and its semantics, on both channels.
const rawServerPath = fileURLToPath(new URL("./fixtures/raw-server.mjs", import.meta.url));
const made = cleanedAfterEach();

const modernSpec = (name: string, extra: Partial<ServerSpec> = {}): ServerSpec => ({
  name,
  transport: { type: "stdio", command: process.execPath, args: [modernServerPath, "--legacy", "reject"], env: {} },
  callTimeoutMs: 10_000,
  connectTimeoutMs: 10_000,
  tools: {},
  ...extra,
});
const rawModernSpec = (name: string): ServerSpec => ({
  ...modernSpec(name),
  transport: { type: "stdio", command: process.execPath, args: [rawServerPath, "--modern"], env: {} },
});

/** A relay that declares elicitation, so that the modern server's `ask` may ask (it answers nothing: the caller takes input_required). */
const relay: PoolOptions["relay"] = { capabilities: { elicitation: { form: {} } }, handle: async () => ({ action: "decline" }) };

async function startPool(specs: ServerSpec[], options: PoolOptions): Promise<ServerPool> {
  const pool = new ServerPool(specs, { retryDelaysMs: [], ...options });
  made.pools.push(pool);
  await pool.start();
  return pool;
}

/** The `hang` calls the modern server has waiting now, and those it saw cancelled. */
async function hanging(pool: ServerPool): Promise<{ waiting: number; cancelled: number }> {
  return JSON.parse(textOf(await pool.callTool("m", "hanging")));
}

/** An outcome as a test compares it: the result, or the error's class, message, data and cause. */
function outcome(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    (ok) => ({ ok }),
    (error: Error) => ({
      error: { name: error.constructor.name, message: error.message, data: (error as { data?: unknown }).data, cause: causeOf(error.cause) },
    }),
  );
}

function causeOf(error: unknown): unknown {
  if (error instanceof ProtocolError || error instanceof SdkError)
    return { class: error.constructor.name, code: error.code, message: error.message, data: error.data };
  return error === undefined ? undefined : { message: (error as Error).message };
}

describe.each([
  { channel: "the call lane", callLane: true, token: expect.stringMatching(/^codemux-\d+$/), everyProgress: true },
  { channel: "the SDK client", callLane: false, token: expect.any(Number), everyProgress: false },
])("tools/call to a 2026 stdio server through $channel", ({ callLane, token, everyProgress }) => {
  const start = (extra: Partial<ServerSpec> = {}) => startPool([modernSpec("m", extra)], { callLane, relay });

  it("sends the SDK client's request: the era's envelope, the caller's capabilities with the tasks extension, the trace context", async () => {
    const pool = await start();
    expect(pool.status()[0]?.protocol).toBe("2026-07-28");
    const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    const options: CallOptions = { clientCapabilities: { elicitation: { form: {} }, sampling: {} }, traceMeta: { traceparent } };
    const seen = JSON.parse(textOf(await pool.callTool("m", "whoami", {}, options)));
    seen.metaKeys.sort();
    expect(seen).toEqual({
      era: "modern",
      protocolVersion: "2026-07-28",
      // Of the caller's capabilities, those the relay can answer; and the tasks extension codemux takes.
      clientCapabilities: { elicitation: { form: {} }, extensions: { "io.modelcontextprotocol/tasks": {} } },
      metaKeys: ["progressToken", "traceparent"],
      progressToken: token,
      traceparent,
    });
  });

  it("times out as the SDK does, and the server sees the call cancelled", async () => {
    const pool = await start({ callTimeoutMs: 300 });
    const error = await pool.callTool("m", "hang").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CallTimeoutError);
    expect((error as CallTimeoutError).cause).toMatchObject({ code: SdkErrorCode.RequestTimeout, data: { timeout: 300 } });
    await until(async () => (await hanging(pool)).cancelled === 1);
    expect(await hanging(pool)).toEqual({ waiting: 0, cancelled: 1 });
  });

  it("resets the timeout on progress and hands progress, in order, to onprogress before the answer", async () => {
    const pool = await start({ callTimeoutMs: 400 });
    const progress: unknown[] = [];
    const result = await pool.callTool("m", "slow", { ms: 1200, steps: 8 }, { onprogress: (p) => progress.push(p) });
    expect(textOf(result)).toBe("slept 1200 ms");
    const all = Array.from({ length: 8 }, (_, i) => ({ progress: i + 1, total: 8 }));
    // The SDK client hands progress over a microtask late: the last one, when it comes in the same read as the answer, is dropped.
    expect(progress).toEqual(everyProgress ? all : all.slice(0, progress.length));
    expect(progress.length).toBeGreaterThanOrEqual(7);
  });

  it("cancels the call on the server when its signal aborts, and leaves no listener behind", async () => {
    const pool = await start();
    const controller = new AbortController();
    const call = pool.callTool("m", "hang", {}, { signal: controller.signal });
    await until(async () => (await hanging(pool)).waiting === 1);
    controller.abort(new Error("the user gave up"));
    await expect(call).rejects.toBeInstanceOf(CallCancelledError);
    await until(async () => (await hanging(pool)).cancelled === 1);
    expect(await hanging(pool)).toEqual({ waiting: 0, cancelled: 1 });
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    // A call whose signal aborted before it started is not sent at all.
    const before = JSON.parse(textOf(await pool.callTool("m", "counter"))).calls as number;
    await expect(pool.callTool("m", "echo", { text: "x" }, { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(CallCancelledError);
    expect(JSON.parse(textOf(await pool.callTool("m", "counter"))).calls).toBe(before + 1);
  });

  it("turns JSON-RPC errors into DownstreamErrors with the server's code and data", async () => {
    const pool = await start();
    const coded = (await pool
      .callTool("m", "fail_rpc", { code: -32602, message: "bad arguments", data: { field: "path" } })
      .catch((e: unknown) => e)) as DownstreamError;
    expect(coded).toBeInstanceOf(DownstreamError);
    expect(coded.message).toBe("m__fail_rpc failed: bad arguments");
    expect(coded.data).toMatchObject({ rpcCode: -32602 });
    expect(coded.cause).toMatchObject({ code: -32602, data: { field: "path" } });
  });

  it("fails every call in flight with ServerDisconnectedError when the server dies mid-call", async () => {
    const pool = await start();
    const hung = [pool.callTool("m", "hang"), pool.callTool("m", "hang")];
    const crash = pool.callTool("m", "crash");
    for (const call of [...hung, crash]) {
      const error = await call.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ServerDisconnectedError);
      expect((error as Error).cause).toMatchObject({ code: SdkErrorCode.ConnectionClosed });
    }
  });
});

describe("the call lane and the SDK path before a 2026 stdio server", () => {
  it("answer and fail alike: results, errors, input_required with and without the caller taking it, a round answered", async () => {
    const [lane, sdk] = await Promise.all([startPool([modernSpec("m")], { callLane: true, relay }), startPool([modernSpec("m")], { callLane: false, relay })]);
    const round = { inputResponses: { q: { action: "accept", content: { answer: "yes" } } }, requestState: "ask:really?" };
    const calls: Array<[string, Record<string, unknown>, CallOptions]> = [
      ["echo", { text: "hello" }, {}],
      ["huge", { bytes: 100_000 }, {}],
      ["throw", { message: "no such file" }, {}],
      ["fail_rpc", { code: -32000, message: "busy", data: { retryAfter: 5 } }, {}],
      ["nope", {}, {}],
      // input_required: taken by the caller (a round given), refused when none is, and the retry that answers it.
      ["ask", { message: "really?" }, { inputRequired: {} }],
      ["ask", { message: "really?" }, {}],
      ["ask", { message: "really?" }, { inputRequired: round }],
      ["ask_rounds", { rounds: 2 }, { inputRequired: {} }],
      ["roots", {}, { inputRequired: {} }],
    ];
    for (const [tool, args, options] of calls) {
      const [viaLane, viaSdk] = await Promise.all([outcome(lane.callTool("m", tool, args, options)), outcome(sdk.callTool("m", tool, args, options))]);
      expect(viaLane, `${tool} ${JSON.stringify(options)}`).toEqual(viaSdk);
    }
  });

  it("settle every result shape alike, the plain ones without the codec, with the caller taking input_required or not", async () => {
    const [lane, sdk] = await Promise.all([startPool([rawModernSpec("r")], { callLane: true }), startPool([rawModernSpec("r")], { callLane: false })]);
    const serverInfo = { "io.modelcontextprotocol/serverInfo": { name: "raw", version: "1.0.0" } };
    const text = [{ type: "text", text: "t" }];
    const shapes: unknown[] = [
      { resultType: "complete", content: text },
      { resultType: "complete", content: text, _meta: serverInfo },
      { resultType: "complete", content: text, isError: true, structuredContent: { n: 1 }, _meta: serverInfo },
      { resultType: "complete", content: [] },
      // What the codec must see: other _meta, an unusual serverInfo, other keys, other content, no resultType, another one.
      { resultType: "complete", content: text, _meta: { ...serverInfo, "vendor/trace": "abc" } },
      { resultType: "complete", content: text, _meta: { "io.modelcontextprotocol/serverInfo": { name: "raw", version: "1", title: "Raw" } } },
      { resultType: "complete", content: text, _meta: { "io.modelcontextprotocol/serverInfo": { name: "raw" } } },
      { resultType: "complete", content: text, vendorKey: true },
      { resultType: "complete", content: [{ type: "image", data: Buffer.from("png").toString("base64"), mimeType: "image/png" }] },
      { resultType: "complete", content: [{ type: "text", text: "t", annotations: { priority: 1 } }] },
      { resultType: "complete", content: text, structuredContent: [1, 2] },
      { content: text },
      {},
      { resultType: "surprise", content: text },
      { resultType: 5, content: text },
      // Invalid: refused on both paths.
      { resultType: "complete", content: "not an array" },
      { resultType: "complete", content: [{ type: "text", text: 5 }] },
      { resultType: "complete", content: [], isError: "yes" },
      // input_required: taken by a caller that gives a round, refused otherwise; with neither questions nor state it is invalid.
      { resultType: "input_required", inputRequests: { q: { method: "roots/list" } }, requestState: "s", _meta: serverInfo },
      { resultType: "input_required", requestState: "only state" },
      { resultType: "input_required" },
      // Tasks, which the SDK client would refuse: settled by the SDK channel's task follower on both paths.
      { resultType: "task", taskId: "t1", status: "completed", result: { content: text, structuredContent: { done: true } } },
      { resultType: "task", taskId: "t2", status: "failed", error: { code: -32001, message: "the job broke", data: { step: 3 } } },
      { resultType: "task", status: "working" },
    ];
    for (const result of shapes)
      for (const options of [{}, { inputRequired: {} }] as CallOptions[]) {
        const [viaLane, viaSdk] = await Promise.all([
          outcome(lane.callTool("r", "shape", { result }, options)),
          outcome(sdk.callTool("r", "shape", { result }, options)),
        ]);
        expect(viaLane, `${JSON.stringify(result)} ${JSON.stringify(options)}`).toEqual(viaSdk);
      }
  });

  it("leave a tool that marks x-mcp-header parameters to the SDK client, and answer HeaderMismatch by listing again and sending once more", async () => {
    // No refresh of the list after the change, within the test: only the retry's own tools/list.
    const options = { listChangedDebounceMs: 600_000 };
    const [lane, sdk] = await Promise.all([
      startPool([rawModernSpec("r")], { ...options, callLane: true }),
      startPool([rawModernSpec("r")], { ...options, callLane: false }),
    ]);
    expect(JSON.parse(textOf(await lane.callTool("r", "request-id")))).toEqual(expect.stringMatching(/^codemux-\d+$/));
    for (const pool of [lane, sdk]) expect(JSON.parse(textOf(await pool.callTool("r", "marked", { region: "eu" })))).toEqual(expect.any(Number));
    const mismatch = async (pool: ServerPool) => {
      const before = (JSON.parse(textOf(await pool.callTool("r", "seen"))) as unknown[]).length;
      const failed = await outcome(pool.callTool("r", "error", { code: -32020, message: "Region header mismatch" }));
      const methods = (JSON.parse(textOf(await pool.callTool("r", "seen"))) as Array<{ method: string }>).slice(before).map((r) => r.method);
      return { failed, methods };
    };
    const [viaLane, viaSdk] = await Promise.all([mismatch(lane), mismatch(sdk)]);
    expect(viaLane).toEqual(viaSdk);
    // The call, the list, the call once more, then the test's own call of `seen`.
    expect(viaLane.methods).toEqual(["tools/call", "tools/list", "tools/call", "tools/call"]);
  });

  it("cancel with the envelope under the notification, as the SDK client sends it", async () => {
    const [lane, sdk] = await Promise.all([startPool([rawModernSpec("r")], { callLane: true }), startPool([rawModernSpec("r")], { callLane: false })]);
    const cancelled = async (pool: ServerPool) => {
      const controller = new AbortController();
      const call = pool.callTool("r", "hang", {}, { signal: controller.signal });
      controller.abort("stop");
      await expect(call).rejects.toBeInstanceOf(CallCancelledError);
      let seen: Array<{ requestId: unknown; reason: string; _meta?: Record<string, unknown> }> = [];
      await until(async () => (seen = JSON.parse(textOf(await pool.callTool("r", "cancellations")))).length === 1);
      return seen[0]!;
    };
    const [viaLane, viaSdk] = await Promise.all([cancelled(lane), cancelled(sdk)]);
    expect(viaLane.requestId).toEqual(expect.stringMatching(/^codemux-\d+$/));
    expect({ ...viaLane, requestId: 0 }).toEqual({ ...viaSdk, requestId: 0 });
    expect(Object.keys(viaLane._meta ?? {})).toEqual([
      "io.modelcontextprotocol/protocolVersion",
      "io.modelcontextprotocol/clientInfo",
      "io.modelcontextprotocol/clientCapabilities",
    ]);
  });
});

describe("isPlainModernCallToolResult", () => {
  it("accepts only what the client's 2026 codec returns unchanged but for resultType", async () => {
    const pool = await startPool([rawModernSpec("r")], { callLane: false });
    const client = (await pool.client("r")) as ChannelClient;
    const serverInfo = { "io.modelcontextprotocol/serverInfo": { name: "s", version: "1" } };
    const accepted = [
      { resultType: "complete", content: [] },
      { resultType: "complete", content: [{ type: "text", text: "a" }], isError: false, structuredContent: { a: [1] }, _meta: serverInfo },
    ];
    const refused = [
      { content: [] },
      { resultType: "input_required", content: [] },
      { resultType: "complete" },
      { resultType: "complete", content: [], _meta: {} },
      { resultType: "complete", content: [], _meta: { ...serverInfo, other: 1 } },
      { resultType: "complete", content: [], _meta: { "io.modelcontextprotocol/serverInfo": { name: "s", version: 1 } } },
      { resultType: "complete", content: [], other: 1 },
      { resultType: "complete", content: [null] },
      [],
      null,
    ];
    for (const value of accepted) {
      expect(isPlainModernCallToolResult(value)).toBe(true);
      const { resultType: _, ...complete } = value;
      expect(client.checkCallToolResult(value)).toEqual(complete);
    }
    for (const value of refused) expect(isPlainModernCallToolResult(value), JSON.stringify(value)).toBe(false);
  });
});
