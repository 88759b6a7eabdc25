import { misbehavingServerPath } from "@codemux/test-servers";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  CallCancelledError,
  CallTimeoutError,
  ServerDisconnectedError,
  ServerPool,
  ServerUnavailableError,
  ToolNotFoundError,
  parseConfig,
  type ServerSpec,
} from "../src/index";
import { stdioSpec } from "./helpers";

const require = createRequire(import.meta.url);
const pools: ServerPool[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
  children.splice(0).forEach((c) => c.kill());
});

function misbehaving(name: string, extra: Partial<ServerSpec> = {}, args: string[] = [], env: Record<string, string> = {}): ServerSpec {
  return {
    name,
    transport: { type: "stdio", command: process.execPath, args: [misbehavingServerPath, ...args], env },
    callTimeoutMs: 10_000,
    connectTimeoutMs: 10_000,
    tools: {},
    ...extra,
  };
}

async function startPool(specs: ServerSpec[], options: ConstructorParameters<typeof ServerPool>[1] = {}): Promise<ServerPool> {
  const pool = new ServerPool(specs, { backoff: { initialMs: 50, maxMs: 200 }, retryDelaysMs: [20, 40], ...options });
  pools.push(pool);
  await pool.start();
  return pool;
}

const textOf = (result: { content: unknown }) => (result.content as Array<{ text: string }>)[0]!.text;

describe("ServerPool with real child processes", () => {
  it("serves the healthy servers while a missing command and a server that exits at once fail with clear reasons", async () => {
    const pool = await startPool([
      misbehaving("good"),
      { ...misbehaving("missing"), transport: { type: "stdio", command: "codemux-no-such-command", args: [], env: {} } },
      misbehaving("quitter", {}, ["--exit-at-start", "--stderr", "fatal: no API key"]),
    ]);
    const status = Object.fromEntries(pool.status().map((s) => [s.name, s]));
    expect(status.good).toMatchObject({ state: "ready" });
    expect(status.good!.toolCount).toBeGreaterThan(5);
    expect(status.missing).toMatchObject({ state: "failed", error: expect.stringContaining('command not found: "codemux-no-such-command"') });
    expect(status.quitter).toMatchObject({ state: "failed", error: expect.stringMatching(/exited with code 3.*fatal: no API key/) });
    expect(textOf(await pool.callTool("good", "echo", { text: "hi" }))).toBe("hi");
    await expect(pool.callTool("quitter", "echo", { text: "x" })).rejects.toBeInstanceOf(ServerUnavailableError);
    await expect(pool.callTool("nope", "echo")).rejects.toThrow(/No server named "nope" \(servers: good, missing, quitter\)/);
  });

  it("ends a hung call at its timeout and cancels it downstream", async () => {
    const pool = await startPool([misbehaving("m", { callTimeoutMs: 300 })]);
    const started = Date.now();
    await expect(pool.callTool("m", "hang")).rejects.toBeInstanceOf(CallTimeoutError);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(textOf(await pool.callTool("m", "echo", { text: "still here" }))).toBe("still here");
  });

  it("passes progress through and lets a call that reports progress outlive the timeout", async () => {
    const pool = await startPool([misbehaving("m", { callTimeoutMs: 400 })]);
    const progress: number[] = [];
    const result = await pool.callTool("m", "slow", { ms: 1200, steps: 8 }, { onprogress: (p) => progress.push(p.progress) });
    expect(textOf(result)).toBe("slept 1200 ms");
    // Every one, in order, before the answer, whichever path the call took.
    expect(progress).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it("cancels a call when the caller aborts", async () => {
    const pool = await startPool([misbehaving("m")]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    await expect(pool.callTool("m", "hang", {}, { signal: controller.signal })).rejects.toBeInstanceOf(CallCancelledError);
    expect(textOf(await pool.callTool("m", "echo", { text: "ok" }))).toBe("ok");
  });

  it("fails a call in flight fast when the server crashes, then restarts the server", async () => {
    const states: string[] = [];
    const pool = await startPool([misbehaving("m")]);
    pool.on("state", (s) => states.push(s.state));
    const first = JSON.parse(textOf(await pool.callTool("m", "counter")));
    const started = Date.now();
    const error = await pool.callTool("m", "crash", { code: 7 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerDisconnectedError);
    expect((error as Error).message).toMatch(/Server "m" disconnected during the call: the process exited with code 7/);
    expect(Date.now() - started).toBeLessThan(1000);
    const after = JSON.parse(textOf(await pool.callTool("m", "counter")));
    expect(after.pid).not.toBe(first.pid);
    expect(after.calls).toBe(1);
    expect(pool.status()[0]).toMatchObject({ state: "ready", restarts: 1 });
    expect(states).toContain("reconnecting");
  });

  it("tells each start's own stderr lines when a server crashes again after a restart", async () => {
    const pool = await startPool([misbehaving("m", {}, ["--stderr", "fatal: simulated crash"])]);
    for (const _ of [1, 2, 3]) {
      const error = await pool.callTool("m", "crash", { code: 7 }).catch((e: unknown) => e);
      expect((error as Error).message).toMatch(/the process exited with code 7; stderr: fatal: simulated crash$/);
      await pool.callTool("m", "echo", { text: "back" });
      expect(pool.status()[0]!.stderrTail).toEqual(["fatal: simulated crash"]);
    }
  });

  it("counts a restart asked for with restart(), as it counts one after a crash", async () => {
    const pool = await startPool([misbehaving("m")]);
    const first = JSON.parse(textOf(await pool.callTool("m", "counter")));
    await pool.restart("m");
    const after = JSON.parse(textOf(await pool.callTool("m", "counter")));
    expect(after.pid).not.toBe(first.pid);
    expect(pool.status()[0]).toMatchObject({ state: "ready", restarts: 1 });
    await pool.restart("m");
    await pool.callTool("m", "counter");
    expect(pool.status()[0]).toMatchObject({ state: "ready", restarts: 2 });
  });

  it("keeps a server whose tool definitions break the schema: the bad fields are dropped, its status says which, every tool stays", async () => {
    const pool = await startPool([misbehaving("m", {}, ["--bad-annotations"])]);
    const status = pool.status()[0]!;
    expect(status).toMatchObject({ state: "ready" });
    expect(status.warnings).toEqual([
      'tool "string_hint": dropped annotations.readOnlyHint (expected boolean, received string)',
      'tool "number_title": dropped title (expected string, received number)',
    ]);
    const tools = pool.tools().find((t) => t.server === "m")!.tools;
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["echo", "crash", "string_hint", "number_title"]));
    expect(tools.find((t) => t.name === "string_hint")!.annotations).toEqual({ destructiveHint: false });
    expect(tools.find((t) => t.name === "number_title")).not.toHaveProperty("title");
    expect(textOf(await pool.callTool("m", "string_hint"))).toBe("called string_hint");
  });

  it("keeps working through stdout noise, returns a 5 MB result whole, and runs 200 calls at once", async () => {
    const pool = await startPool([misbehaving("m", {}, ["--noise-at-start"])]);
    expect(textOf(await pool.callTool("m", "noise", { lines: 5 }))).toBe("noisy but fine");
    expect(textOf(await pool.callTool("m", "huge", { bytes: 5_000_000 }))).toHaveLength(5_000_000);
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => pool.callTool("m", "echo", { text: `n${i}` })));
    expect(results.map(textOf)).toEqual(Array.from({ length: 200 }, (_, i) => `n${i}`));
  });

  it("refreshes the tool list on tools/list_changed", async () => {
    const pool = await startPool([misbehaving("m")], { listChangedDebounceMs: 20 });
    const changed = once(pool, "tools");
    await pool.callTool("m", "add_tool", { name: "brand_new" });
    const [server, tools] = (await changed) as [string, Array<{ name: string }>];
    expect(server).toBe("m");
    expect(tools.map((t) => t.name)).toContain("brand_new");
  });

  it("gives a stdio server PATH and its configured env but not the rest of the environment", async () => {
    process.env.CODEMUX_TEST_SECRET = "leaked";
    try {
      const pool = await startPool([misbehaving("m", {}, [], { GIVEN: "yes" })]);
      const read = async (name: string) => JSON.parse(textOf(await pool.callTool("m", "env", { name }))).value;
      expect(await read("CODEMUX_TEST_SECRET")).toBeNull();
      expect(await read("GIVEN")).toBe("yes");
      expect(await read("PATH")).toBe(process.env.PATH);
    } finally {
      delete process.env.CODEMUX_TEST_SECRET;
    }
  });

  it("applies tools.allow / tools.deny to the list and to calls", async () => {
    const pool = await startPool([misbehaving("m", { tools: { allow: ["echo", "c*"], deny: ["crash"] } })]);
    expect(
      pool
        .connection("m")
        .tools.map((t) => t.name)
        .sort(),
    ).toEqual(["cancellations", "counter", "echo"]);
    const denied = await pool.callTool("m", "crash").catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(ToolNotFoundError);
    expect((denied as Error).message).toBe('Server "m" cannot call "crash": it is denied by the config\'s tools.deny.');
    await expect(pool.callTool("m", "huge", { bytes: 1 })).rejects.toThrow(/it is not in the config's tools\.allow/);
  });

  it("reports a server that does not finish connecting within connectTimeoutMs without holding up the others", async () => {
    const pool = await startPool([misbehaving("slow", { connectTimeoutMs: 300 }, ["--start-delay-ms", "5000"]), misbehaving("fast")]);
    const status = Object.fromEntries(pool.status().map((s) => [s.name, s]));
    expect(status.slow).toMatchObject({ state: "failed", error: expect.stringContaining("within 300 ms") });
    expect(status.fast!.state).toBe("ready");
  });

  it("a server with an unset variable fails alone with the variable's name", async () => {
    const config = parseConfig(JSON.stringify({ mcpServers: { m: { command: "x", env: { K: "${CODEMUX_UNSET_VAR}" } } } }), { env: {} });
    const pool = await startPool(config.servers);
    expect(pool.status()[0]).toMatchObject({ state: "failed", error: expect.stringContaining("CODEMUX_UNSET_VAR is not set") });
  });
});

describe("ServerPool over legacy SSE", () => {
  it("connects to the reference server's SSE transport and calls a tool", async () => {
    const free = createServer();
    await new Promise<void>((resolve) => free.listen(0, "127.0.0.1", resolve));
    const port = (free.address() as AddressInfo).port;
    await new Promise((resolve) => free.close(resolve));
    const everything = join(dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")), "dist/index.js");
    const child = spawn(process.execPath, [everything, "sse"], { env: { ...process.env, PORT: String(port) }, stdio: ["ignore", "ignore", "pipe"] });
    children.push(child);
    await new Promise<void>((resolve) => child.stderr!.on("data", (d: Buffer) => d.toString().includes("running on port") && resolve()));
    const pool = await startPool([
      {
        name: "legacy",
        transport: { type: "sse", url: `http://127.0.0.1:${port}/sse`, headers: { "X-Test": "1" } },
        callTimeoutMs: 5000,
        connectTimeoutMs: 5000,
        tools: {},
      },
    ]);
    expect(pool.status()[0]).toMatchObject({ state: "ready", transport: "sse" });
    expect(textOf(await pool.callTool("legacy", "echo", { message: "over sse" }))).toContain("over sse");
  });
});

describe("ServerPool over Streamable HTTP", () => {
  async function startHttpServer(): Promise<string> {
    const child = spawn(process.execPath, [misbehavingServerPath, "--http", "0"], { stdio: ["ignore", "pipe", "inherit"] });
    children.push(child);
    const [chunk] = (await once(child.stdout!, "data")) as [Buffer];
    const port = /listening (\d+)/.exec(chunk.toString())![1];
    return `http://127.0.0.1:${port}`;
  }

  it("calls tools, and re-initializes once when the server has forgotten the session (404)", async () => {
    const base = await startHttpServer();
    const pool = await startPool([
      { name: "h", transport: { type: "http", url: `${base}/mcp`, headers: { "X-Test": "1" } }, callTimeoutMs: 5000, connectTimeoutMs: 5000, tools: {} },
    ]);
    expect(pool.status()[0]!.state).toBe("ready");
    expect(textOf(await pool.callTool("h", "echo", { text: "one" }))).toBe("one");
    await fetch(`${base}/sessions`, { method: "DELETE" });
    expect(textOf(await pool.callTool("h", "echo", { text: "two" }))).toBe("two");
  });

  it("says a server that went away cannot be reached, and calls it again once it is back on the same port", async () => {
    const base = await startHttpServer();
    const pool = await startPool([
      { name: "h", transport: { type: "http", url: `${base}/mcp`, headers: {} }, callTimeoutMs: 5000, connectTimeoutMs: 5000, tools: {} },
    ]);
    expect(textOf(await pool.callTool("h", "echo", { text: "one" }))).toBe("one");
    const first = children.pop()!;
    first.kill();
    await once(first, "exit");
    const error = await pool.callTool("h", "echo", { text: "two" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerUnavailableError);
    expect((error as Error).message).toMatch(
      /^Server "h" is unavailable: cannot reach http:\/\/127\.0\.0\.1:\d+\/mcp: connection refused \(connect ECONNREFUSED 127\.0\.0\.1:\d+\)/,
    );
    const port = new URL(base).port;
    const again = spawn(process.execPath, [misbehavingServerPath, "--http", port], { stdio: ["ignore", "pipe", "inherit"] });
    children.push(again);
    await once(again.stdout!, "data");
    expect(textOf(await pool.callTool("h", "echo", { text: "three" }))).toBe("three");
  });

  it("sends the configured headers", async () => {
    process.env.MISBEHAVING_REQUIRE_HEADER = "X-Api-Key";
    let base: string;
    try {
      base = await startHttpServer();
    } finally {
      delete process.env.MISBEHAVING_REQUIRE_HEADER;
    }
    const spec = (headers: Record<string, string>, name: string): ServerSpec => ({
      name,
      transport: { type: "http", url: `${base}/mcp`, headers },
      callTimeoutMs: 5000,
      connectTimeoutMs: 5000,
      tools: {},
    });
    const pool = await startPool([spec({ "X-Api-Key": "k" }, "with"), spec({}, "without")]);
    expect(pool.status().map((s) => [s.name, s.state])).toEqual([
      ["with", "ready"],
      ["without", "failed"],
    ]);
    expect(pool.status()[1]!.error).toMatch(/401/);
  });
});

describe("restart", () => {
  it("stops one server and starts it again from the same entry, in its place; the others keep their process", async () => {
    const pool = await startPool([misbehaving("a"), misbehaving("b"), misbehaving("c")]);
    const pid = async (server: string) => /pid\D+(\d+)/.exec(JSON.stringify(await pool.callTool(server, "counter")))?.[1];
    const before = { a: await pid("a"), b: await pid("b") };
    await pool.restart("a");
    await pool.waitFor("a", 10_000);
    expect(pool.status().map((s) => [s.name, s.alias, s.state])).toEqual([
      ["a", "c1", "ready"],
      ["b", "c2", "ready"],
      ["c", "c3", "ready"],
    ]);
    expect(await pid("a")).not.toBe(before.a);
    expect(await pid("b")).toBe(before.b);
    await expect(pool.restart("nope")).rejects.toThrow(/nope/);
  });
});

describe("connection identity", () => {
  it("names each server's connection c1, c2... for the pool's life, with an id that changes only when its entry does", async () => {
    const pool = new ServerPool([stdioSpec("a"), stdioSpec("b")]);
    const before = pool.status();
    expect(before.map((s) => [s.name, s.alias])).toEqual([
      ["a", "c1"],
      ["b", "c2"],
    ]);
    for (const s of before) expect(s.id).toMatch(/^[0-9a-f]{8}$/);
    // b's entry changes, a goes, d comes: b keeps its alias with a new id, d takes the next alias, a's is not reused.
    await pool.update([stdioSpec("b", ["--changed"]), stdioSpec("d")]);
    const after = Object.fromEntries(pool.status().map((s) => [s.name, s]));
    expect(after.b).toMatchObject({ alias: "c2" });
    expect(after.b?.id).not.toBe(before[1]?.id);
    expect(after.d).toMatchObject({ alias: "c3" });
    await pool.update([stdioSpec("b", ["--changed"]), stdioSpec("d"), stdioSpec("a")]);
    expect(pool.status().find((s) => s.name === "a")).toMatchObject({ alias: "c1", id: before[0]?.id });
    await pool.close();
  });
});
