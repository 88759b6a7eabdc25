import { silentLogger } from "@codemux/core";
import { misbehavingServerPath } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CreateMessageRequestSchema, CreateTaskResultSchema, RELATED_TASK_META_KEY, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
// The lane answers as the SDK codemux serves on (v2) does; the 2025-era client driving it is SDK 1.x.
import { CallToolResultSchema } from "@modelcontextprotocol/core";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Codemux, type ToolPool } from "../src/index";
import { serveStdio } from "../src/stdio";
import { attachFastLane, checkedResult, wireResult } from "../src/fast-lane";
import { createSession } from "../src/session";
import { StdioServerTransport } from "../src/stdio-transport";
import { config, referenceServer, textOf } from "./helpers";

// codemux over real stdio, built (the package's dist): the fast lane is what `serveStdio` serves on.
const fixture = join(import.meta.dirname, "fixtures/serve-stdio.mjs");
const everything = referenceServer("@modelcontextprotocol/server-everything");
const fixtureArgs = (fast: boolean) => [fixture, misbehavingServerPath, everything, ...(fast ? [] : ["--no-fast-lane"])];

describe("tools/call on the stdio fast lane, through an SDK client", () => {
  let client: Client;
  const call = async (name: string, args: Record<string, unknown> = {}) =>
    (await client.callTool({ name: "call_tool", arguments: { name, args } })) as CallToolResult;

  beforeAll(async () => {
    client = new Client({ name: "fast-lane-test", version: "1.0.0" }, { capabilities: { sampling: {} } });
    client.setRequestHandler(CreateMessageRequestSchema, async () => ({
      model: "stand-in",
      role: "assistant",
      content: { type: "text", text: "sampled by the test client" },
    }));
    await client.connect(new StdioClientTransport({ command: process.execPath, args: fixtureArgs(true), stderr: "ignore" }));
  });
  afterAll(async () => {
    await client?.close();
  });

  it("answers a call", async () => {
    expect(textOf(await call("bad__echo", { text: "over the lane" }))).toBe("over the lane");
  });

  it("aborts the call's signal on notifications/cancelled, and the downstream server sees the cancellation", async () => {
    const cancellations = async () => JSON.parse(textOf(await call("bad__cancellations"))) as { count: number; notices: number };
    const calls = async () => (JSON.parse(textOf(await call("bad__counter"))) as { calls: number }).calls;
    const before = await cancellations();
    const start = await calls();
    const controller = new AbortController();
    const running = client.callTool({ name: "call_tool", arguments: { name: "bad__hang" } }, undefined, { signal: controller.signal });
    // Cancel only once the server has the hang call (each poll is one counter call of its own).
    let polls = 0;
    await expect.poll(async () => (await calls()) - start - ++polls, { timeout: 20_000 }).toBeGreaterThanOrEqual(1);
    controller.abort();
    await expect(running).rejects.toThrow();
    await expect.poll(async () => (await cancellations()).count, { timeout: 10_000 }).toBe(before.count + 1);
    expect((await cancellations()).notices).toBe(before.notices + 1);
    expect(textOf(await call("bad__echo", { text: "alive" }))).toBe("alive");
  });

  it("sends notifications/progress for a call with a progress token", async () => {
    const progress: number[] = [];
    const result = await client.callTool({ name: "call_tool", arguments: { name: "bad__slow", args: { ms: 300, steps: 3 } } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    expect(textOf(result as CallToolResult)).toBe("slept 300 ms");
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
  });

  it("relays a server's sampling request during the call to this session's client", async () => {
    expect(textOf(await call("everything__trigger-sampling-request", { prompt: "hi", maxTokens: 10 }))).toContain("sampled by the test client");
  });

  it("answers a task-augmented call with a task (the SDK path)", async () => {
    const created = (await client.request(
      { method: "tools/call", params: { name: "call_tool", arguments: { name: "bad__echo", args: { text: "as a task" } }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    )) as { task: { taskId: string; status: string } };
    expect(created.task.taskId).toEqual(expect.any(String));
  });
});

/** One codemux process spoken to line by line, so answers can be compared byte for byte. */
class RawSession {
  readonly child: ChildProcessWithoutNullStreams;
  readonly lines: string[] = [];
  #buffer = "";
  #waiters: Array<() => void> = [];

  constructor(fast: boolean) {
    this.child = spawn(process.execPath, fixtureArgs(fast), { stdio: ["pipe", "pipe", "ignore"] }) as unknown as ChildProcessWithoutNullStreams;
    this.child.stdout.setEncoding("utf8");
    this.child.stdout.on("data", (chunk: string) => {
      this.#buffer += chunk;
      let nl = this.#buffer.indexOf("\n");
      while (nl !== -1) {
        this.lines.push(this.#buffer.slice(0, nl));
        this.#buffer = this.#buffer.slice(nl + 1);
        nl = this.#buffer.indexOf("\n");
      }
      for (const wake of this.#waiters.splice(0)) wake();
    });
  }

  send(message: Record<string, unknown>): void {
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
  }

  /** The raw line that answers request `id` (and the notifications about it sent before it). */
  async request(id: number, method: string, params?: unknown): Promise<{ answer: string; related: string[] }> {
    const from = this.lines.length;
    this.send({ id, method, ...(params === undefined ? {} : { params }) });
    const answer = await this.#until((line) => (JSON.parse(line) as { id?: unknown; method?: unknown }).id === id && !("method" in JSON.parse(line)), from);
    const related = this.lines.slice(from).filter((line) => line !== answer && line.includes('"notifications/progress"'));
    return { answer, related };
  }

  async initialize(): Promise<void> {
    await this.request(0, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1.0.0" } });
    this.send({ method: "notifications/initialized" });
  }

  async #until(match: (line: string) => boolean, from: number): Promise<string> {
    for (;;) {
      const found = this.lines.slice(from).find(match);
      if (found !== undefined) return found;
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  close(): void {
    this.child.stdin.end();
  }
}

describe("the fast lane's answers are the SDK path's, byte for byte", () => {
  let fast: RawSession;
  let sdk: RawSession;
  let nextId = 100;
  // Two processes cannot answer at the same instant: when and how long are set aside (checked below), every other byte compared.
  const untimed = (answer: string) =>
    answer.replace(/"codemux\/processedAt":"[^"]*","codemux\/durationMs":\d+/, '"codemux/processedAt":"T","codemux/durationMs":0');
  const both = async (method: string, params?: unknown) => {
    const id = nextId++;
    const [a, b] = await Promise.all([fast.request(id, method, params), sdk.request(id, method, params)]);
    return { fast: { ...a, answer: untimed(a.answer) }, sdk: { ...b, answer: untimed(b.answer) } };
  };

  beforeAll(async () => {
    fast = new RawSession(true);
    sdk = new RawSession(false);
  });
  afterAll(() => {
    fast?.close();
    sdk?.close();
  });

  it("before initialize, a tools/call is the SDK's to answer", async () => {
    const { fast: a, sdk: b } = await both("tools/call", { name: "call_tool", arguments: { name: "nobody__here" } });
    expect(a.answer).toBe(b.answer);
    await Promise.all([fast.initialize(), sdk.initialize()]);
  });

  it.each([
    ["a plain result", { name: "call_tool", arguments: { name: "bad__echo", args: { text: "same" } } }],
    ["structured content", { name: "call_tool", arguments: { name: "bad__structured", args: { n: 21 } } }],
    ["a tool's error result", { name: "call_tool", arguments: { name: "bad__fail", args: { message: "disk full" } } }],
    ["an unknown tool", { name: "call_tool", arguments: { name: "bad__nope" } }],
    ["invalid tool arguments", { name: "call_tool", arguments: { name: "bad__echo", args: { text: 5 } } }],
    ["a call without arguments", { name: "call_tool" }],
    ["a result whose keys the SDK reorders", { name: "probe_odd_result" }],
  ])("%s", async (_label, params) => {
    const { fast: a, sdk: b } = await both("tools/call", params);
    expect(a.answer).toBe(b.answer);
  });

  it("stamps each answer with its request id, when it was processed and how long it took, in the same place on both paths", async () => {
    const id = nextId++;
    const params = { name: "call_tool", arguments: { name: "bad__echo", args: { text: "stamped" } } };
    const [a, b] = await Promise.all([fast.request(id, "tools/call", params), sdk.request(id, "tools/call", params)]);
    for (const { answer } of [a, b]) {
      const meta = (JSON.parse(answer) as { result: { _meta: Record<string, unknown> } }).result._meta;
      expect(meta).toMatchObject({ "codemux/requestId": String(id), "codemux/durationMs": expect.any(Number) });
      expect(Date.now() - Date.parse(meta["codemux/processedAt"] as string)).toBeLessThan(60_000);
    }
    expect(untimed(a.answer)).toContain('"codemux/processedAt":"T","codemux/durationMs":0');
    expect(untimed(a.answer)).toBe(untimed(b.answer));
  });

  it.each([
    ["a name that is not a string", { name: 5 }],
    ["arguments that are a list", { name: "call_tool", arguments: [1] }],
    ["arguments that are a string", { name: "call_tool", arguments: "{}" }],
    ["a progress token that is not an integer", { name: "call_tool", arguments: { name: "bad__echo", args: { text: "x" } }, _meta: { progressToken: 1.5 } }],
    ["no params at all", undefined],
  ])("invalid params (%s) get the same JSON-RPC error", async (_label, params) => {
    const { fast: a, sdk: b } = await both("tools/call", params);
    expect(JSON.parse(a.answer).error.code).toEqual(expect.any(Number));
    expect(a.answer).toBe(b.answer);
  });

  it("a handler that throws gets the same error answer, code and data kept", async () => {
    const { fast: a, sdk: b } = await both("tools/call", { name: "probe_throw", arguments: { why: "testing" } });
    expect(JSON.parse(a.answer).error).toEqual({ code: -32042, message: "MCP error -32042: the surface threw", data: { why: "testing" } });
    expect(a.answer).toBe(b.answer);
  });

  it("a result the SDK refuses gets the SDK's error", async () => {
    const { fast: a, sdk: b } = await both("tools/call", { name: "probe_bad_result" });
    expect(JSON.parse(a.answer).error.message).toMatch(/^Invalid tools\/call result/);
    expect(a.answer).toBe(b.answer);
  });

  it("progress notifications and the answer after them are the same", async () => {
    const { fast: a, sdk: b } = await both("tools/call", {
      name: "call_tool",
      arguments: { name: "bad__slow", args: { ms: 90, steps: 3 } },
      _meta: { progressToken: "p1" },
    });
    // The first step's notification, long before the answer (a last one can lose the race with the answer at the downstream client).
    expect(a.related[0]).toBe('{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":1,"total":3}}');
    expect(a.related[0]).toBe(b.related[0]);
    expect(a.answer).toBe(b.answer);
  });

  it("a cancelled call gets no answer on either path", async () => {
    const id = nextId++;
    for (const s of [fast, sdk]) {
      s.send({ id, method: "tools/call", params: { name: "call_tool", arguments: { name: "bad__hang" } } });
      s.send({ method: "notifications/cancelled", params: { requestId: id, reason: "the test cancels" } });
    }
    // An answer to a later request shows the cancelled one has had its chance to answer.
    const { fast: a, sdk: b } = await both("tools/call", { name: "call_tool", arguments: { name: "bad__echo", args: { text: "after" } } });
    expect(a.answer).toBe(b.answer);
    for (const s of [fast, sdk]) expect(s.lines.filter((line) => (JSON.parse(line) as { id?: unknown }).id === id)).toEqual([]);
  });
});

describe("which calls take the fast lane (in process)", () => {
  /** A core whose one downstream tool, m__echo, answers at once, and m__hang waits for its signal (recorded). */
  function fakeCore(logger = silentLogger): { core: Codemux; aborted: unknown[] } {
    const aborted: unknown[] = [];
    const pool = {
      names: ["m"],
      status: () => [{ name: "m", state: "ready" as const }],
      start: async () => undefined,
      callTool: async (...[, tool, args, options]: [string, string, Record<string, unknown>?, { signal?: AbortSignal }?]) => {
        if (tool === "hang") {
          const signal = options?.signal;
          if (signal?.aborted) aborted.push(signal.reason);
          else await new Promise((resolve) => signal?.addEventListener("abort", () => resolve(aborted.push(signal.reason))));
        }
        return { content: [{ type: "text" as const, text: String(args?.text) }] };
      },
      on: () => undefined,
      off: () => undefined,
      close: async () => undefined,
    };
    const core = new Codemux({ config: config({}), pool: pool as unknown as ToolPool, logger });
    core.catalog.setServerTools("m", [
      { name: "echo", inputSchema: { type: "object", properties: { text: { type: "string" } } } },
      { name: "hang", inputSchema: { type: "object", properties: {} } },
    ]);
    return { core, aborted };
  }

  /** Lines in and out of in-process streams, answers matched by id. */
  function wire(stdin: PassThrough, stdout: PassThrough) {
    const waiting = new Map<number, (message: Record<string, unknown>) => void>();
    let buffer = "";
    stdout.on("data", (chunk: Buffer) => {
      buffer += chunk.toString();
      for (let nl = buffer.indexOf("\n"); nl !== -1; nl = buffer.indexOf("\n")) {
        const message = JSON.parse(buffer.slice(0, nl)) as Record<string, unknown>;
        buffer = buffer.slice(nl + 1);
        waiting.get(message.id as number)?.(message);
      }
    });
    const send = (message: Record<string, unknown>) => stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
    const request = (id: number, method: string, params?: unknown) =>
      new Promise<Record<string, unknown>>((resolve) => {
        waiting.set(id, resolve);
        send({ id, method, ...(params === undefined ? {} : { params }) });
      });
    return { send, request };
  }

  const initialize = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } };

  /** A session on in-process pipes with the lane in front, after initialize. */
  async function initializedLane(core: Codemux) {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const session = createSession(core.sessions);
    const transport = new StdioServerTransport(stdin, stdout, { drainTimeoutMs: 10 });
    await session.server.connect(transport);
    const lane = attachFastLane(session, transport);
    const { request } = wire(stdin, stdout);
    await request(1, "initialize", initialize);
    return { stdin, stdout, session, transport, lane };
  }
  const echo = { name: "call_tool", arguments: { name: "m__echo", args: { text: "hi" } } };

  it("takes a plain call after initialize, and leaves calls before initialize, task-augmented, related-task and invalid ones to the SDK", async () => {
    const { core } = fakeCore();
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const session = createSession(core.sessions);
    const transport = new StdioServerTransport(stdin, stdout);
    await session.server.connect(transport);
    const lane = attachFastLane(session, transport);
    const { request } = wire(stdin, stdout);
    await request(1, "tools/call", echo);
    expect(lane.calls).toBe(0);
    await request(2, "initialize", initialize);
    const answer = await request(3, "tools/call", echo);
    expect(answer.result).toMatchObject({ content: [{ type: "text", text: "hi" }] });
    expect(lane.calls).toBe(1);
    await request(4, "tools/call", { ...echo, _meta: { progressToken: 7 } });
    expect(lane.calls).toBe(2);
    await request(5, "tools/call", { ...echo, task: { ttl: 1000 } });
    await request(6, "tools/call", { ...echo, _meta: { [RELATED_TASK_META_KEY]: { taskId: "t1" } } });
    await request(7, "tools/call", { name: 7 });
    await request(8, "tools/list");
    expect(lane.calls).toBe(2);
    await transport.close();
    await core.close();
  });

  /** Serves two calls over stdio and returns the debug lines; `fastLane` as serveStdio takes it. */
  async function serveTwoCalls(fastLane?: boolean): Promise<string[]> {
    const lines: string[] = [];
    const { core } = fakeCore({ ...silentLogger, debug: (line) => lines.push(line) });
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const serving = serveStdio(core.sessions, { stdin, stdout, ...(fastLane === undefined ? {} : { fastLane }) });
    const { request } = wire(stdin, stdout);
    await request(1, "initialize", initialize);
    await request(2, "tools/call", echo);
    await request(3, "tools/call", echo);
    stdin.end();
    await serving;
    await core.close();
    return lines;
  }

  it("serveStdio serves calls on the lane, and not with fastLane false", async () => {
    expect(await serveTwoCalls(true)).toContain("stdio session closed: 2 tools/call answered on the fast lane");
    expect((await serveTwoCalls(false)).join("\n")).not.toContain("fast lane");
  });

  it("CODEMUX_SERVER_LANE=0, false or off turns the lane off when serveStdio is given no fastLane", async () => {
    const previous = process.env.CODEMUX_SERVER_LANE;
    try {
      for (const value of ["0", "false", "off"]) {
        process.env.CODEMUX_SERVER_LANE = value;
        expect((await serveTwoCalls()).join("\n")).not.toContain("fast lane");
      }
      process.env.CODEMUX_SERVER_LANE = "1";
      expect(await serveTwoCalls()).toContain("stdio session closed: 2 tools/call answered on the fast lane");
    } finally {
      if (previous === undefined) delete process.env.CODEMUX_SERVER_LANE;
      else process.env.CODEMUX_SERVER_LANE = previous;
    }
  });

  it("tells the server's onerror of an answer it could not send, and answers the next call", async () => {
    const { core } = fakeCore();
    const { stdin, stdout, session, transport, lane } = await initializedLane(core);
    const errors: string[] = [];
    session.server.onerror = (error) => void errors.push(error.message);
    const { send, request } = wire(stdin, stdout);
    const write = transport.send.bind(transport);
    transport.send = async () => {
      throw new Error("pipe gone");
    };
    send({ id: 2, method: "tools/call", params: echo });
    await expect.poll(() => errors).toEqual(["Failed to send response: Error: pipe gone"]);
    transport.send = write;
    expect(await request(3, "tools/call", echo)).toMatchObject({ id: 3, result: { content: [{ type: "text", text: "hi" }] } });
    expect(lane.calls).toBe(2);
    stdin.end();
    await core.close();
  });

  it("aborts a call in flight when the connection closes, and when it is cancelled, as the SDK does", async () => {
    const { core, aborted } = fakeCore();
    const { stdin, stdout, lane } = await initializedLane(core);
    const { send } = wire(stdin, stdout);
    const hang = { name: "call_tool", arguments: { name: "m__hang" } };
    send({ id: 2, method: "tools/call", params: hang });
    send({ method: "notifications/cancelled", params: { requestId: 2, reason: "no longer needed" } });
    await expect.poll(() => aborted.length).toBe(1);
    expect(aborted[0]).toBe("no longer needed");
    send({ id: 3, method: "tools/call", params: hang });
    await expect.poll(() => lane.calls).toBe(2);
    stdin.end();
    await expect.poll(() => aborted.length).toBe(2);
    await core.close();
  });
});

describe("wireResult lays a result out as CallToolResultSchema's parse does, or declines", () => {
  const cases: Array<[string, unknown]> = [
    ["text", { content: [{ type: "text", text: "a" }] }],
    ["text with _meta and isError", { content: [{ type: "text", text: "a" }], isError: true, _meta: { "codemux/bytes": 1 } }],
    ["keys out of the schema's order", { isError: false, other: [1], content: [], structuredContent: { b: 2, a: { c: [1, null] } }, _meta: { z: 1, a: 2 } }],
    ["an empty result", { content: [] }],
  ];
  it.each(cases)("%s", (_label, result) => {
    const wire = wireResult(result);
    expect(wire).toBeDefined();
    expect(JSON.stringify(wire)).toBe(JSON.stringify(CallToolResultSchema.parse(result)));
  });

  it.each([
    ["no content", { structuredContent: { a: 1 } }],
    ["an image block", { content: [{ type: "image", data: "aGk=", mimeType: "image/png" }] }],
    ["a text block with annotations", { content: [{ type: "text", text: "a", annotations: { priority: 1 } }] }],
    ["a text block with its keys reversed", { content: [{ text: "a", type: "text" }] }],
    ["structured content that is a list", { content: [], structuredContent: [1] }],
    ["a progress token in _meta", { content: [], _meta: { progressToken: 1 } }],
    ["isError that is not a boolean", { content: [], isError: "yes" }],
    ["not an object", "text"],
  ])("declines %s, which the SDK's own check then answers", (_label, result) => {
    expect(wireResult(result)).toBeUndefined();
    const parsed = CallToolResultSchema.safeParse(result);
    if (parsed.success) expect(JSON.stringify(checkedResult(result))).toBe(JSON.stringify(parsed.data));
    else expect(() => checkedResult(result)).toThrow(/Invalid tools\/call result/);
  });
});
