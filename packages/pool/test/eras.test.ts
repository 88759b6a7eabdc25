import { misbehavingServerPath, modernServerPath, until } from "@codemux/test-servers";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ServerPool, type PoolOptions, type RememberedEra, type ServerSpec } from "../src/index";
import { cleanedAfterEach, httpSpec, logFile, startConformanceServer, startHttpServer, startModernHttp, textOf } from "./helpers";

const { pools, children, dirs } = cleanedAfterEach();

async function startPool(specs: ServerSpec[], options: PoolOptions = {}): Promise<ServerPool> {
  // Long enough for a node child to start and answer on a loaded machine (a short probe judged modern servers 2025 under load); tests of the timeout set their own.
  const pool = new ServerPool(specs, { retryDelaysMs: [], probeTimeoutMs: 10_000, ...options });
  pools.push(pool);
  await pool.start();
  return pool;
}

function requests(log: string): Array<{ pid: string; method: string }> {
  let text = "";
  try {
    text = readFileSync(log, "utf8");
  } catch {
    return [];
  }
  return text
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [pid = "", method = ""] = line.split(" ");
      return { pid, method };
    });
}

const pids = (log: string) => new Set(requests(log).map((r) => r.pid)).size;
const probes = (log: string) => requests(log).filter((r) => r.method === "server/discover").length;

/** A stdio entry running `node ARGV...`. */
function spec(name: string, argv: string[], extra: Partial<ServerSpec> = {}): ServerSpec {
  return {
    name,
    transport: { type: "stdio", command: process.execPath, args: argv, env: {} },
    callTimeoutMs: 10_000,
    connectTimeoutMs: 10_000,
    tools: {},
    ...extra,
  };
}

const statusOf = (pool: ServerPool, name: string) => pool.status().find((s) => s.name === name)!;

describe("a downstream server's era over stdio (probe, then initialize)", () => {
  it("finds a modern-only server (legacy openings refused) 2026-07-28: one process, no initialize", async () => {
    const log = logFile(dirs);
    const pool = await startPool([spec("m", [modernServerPath, "--legacy", "reject", "--log", log])]);
    expect(textOf(await pool.callTool("m", "echo", { text: "hi" }))).toBe("hi");
    expect(statusOf(pool, "m")).toMatchObject({ state: "ready", protocol: "2026-07-28", era: { kind: "modern" } });
    expect(requests(log)[0]?.method).toBe("server/discover");
    expect(requests(log).map((r) => r.method)).not.toContain("initialize");
    expect(pids(log)).toBe(1);
  });

  it("finds a dual-era server 2026-07-28", async () => {
    const log = logFile(dirs);
    const pool = await startPool([spec("d", [modernServerPath, "--legacy", "serve", "--log", log])]);
    expect(JSON.parse(textOf(await pool.callTool("d", "whoami")))).toMatchObject({ era: "modern" });
    expect(statusOf(pool, "d").protocol).toBe("2026-07-28");
  });

  it("speaks 2025 without a probe to a dual-era server the config pins to 2025-11-25", async () => {
    const log = logFile(dirs);
    const pool = await startPool([spec("p", [modernServerPath, "--legacy", "serve", "--log", log], { protocol: "2025-11-25" })]);
    expect(JSON.parse(textOf(await pool.callTool("p", "whoami")))).toMatchObject({ era: "legacy" });
    expect(statusOf(pool, "p").protocol).toBe("2025-11-25");
    expect(probes(log)).toBe(0);
  });

  it("finds a 2025 server 2025-11-25: the probe and initialize on the same process", async () => {
    const log = logFile(dirs);
    const pool = await startPool([spec("l", [misbehavingServerPath, "--log", log])]);
    expect(textOf(await pool.callTool("l", "echo", { text: "hi" }))).toBe("hi");
    expect(statusOf(pool, "l")).toMatchObject({ protocol: "2025-11-25", era: { kind: "legacy" } });
    expect(
      requests(log)
        .slice(0, 2)
        .map((r) => r.method),
    ).toEqual(["server/discover", "initialize"]);
    expect(pids(log)).toBe(1);
  });

  it("starts a server that exits on the probe (rmcp-style) again, as 2025, and it works", async () => {
    const log = logFile(dirs);
    const pool = await startPool([spec("r", [misbehavingServerPath, "--before-initialize", "exit", "--log", log])]);
    expect(statusOf(pool, "r")).toMatchObject({ state: "ready", protocol: "2025-11-25", era: { kind: "legacy" } });
    expect(textOf(await pool.callTool("r", "echo", { text: "after" }))).toBe("after");
    expect(probes(log)).toBe(1);
    expect(pids(log)).toBe(2);
  });

  it("starts a server that exits on the probe saying it expected initialize (as rmcp does) again, as 2025", async () => {
    const log = logFile(dirs);
    const said = "Error: expect initialized request, but received: Some(Request(server/discover))";
    const pool = await startPool([spec("rs", [misbehavingServerPath, "--before-initialize", "exit", "--exit-said", said, "--log", log])]);
    expect(statusOf(pool, "rs")).toMatchObject({ state: "ready", protocol: "2025-11-25" });
    expect(pids(log)).toBe(2);
  });

  it("starts a server that exits at start saying why once, and reports what it said", async () => {
    const starts = logFile(dirs);
    const pool = await startPool([spec("x", [misbehavingServerPath, "--stderr", "fatal: no token", "--exit-at-start", "--starts", starts])]);
    expect(statusOf(pool, "x")).toMatchObject({ state: "failed", error: "the process exited with code 3; stderr: fatal: no token" });
    expect(readFileSync(starts, "utf8").trim().split("\n")).toHaveLength(1);
  });

  it("probes a 2026-only server again with the whole connect time when a slow start made the short probe take it for 2025", async () => {
    const log = logFile(dirs);
    // It reads nothing for 900 ms: the 300 ms probe gives up, the 2025 opening that follows is refused for its version.
    const pool = await startPool([spec("late", [modernServerPath, "--legacy", "reject", "--delay-ms", "900", "--log", log])], { probeTimeoutMs: 300 });
    expect(statusOf(pool, "late")).toMatchObject({ state: "ready", protocol: "2026-07-28", era: { kind: "modern" } });
    expect(textOf(await pool.callTool("late", "echo", { text: "slow start" }))).toBe("slow start");
    expect(pids(log)).toBe(2);
  });

  it("takes a server silent to the probe for 2025 once the probe times out (probeTimeoutMs)", async () => {
    const log = logFile(dirs);
    const pool = await startPool([spec("s", [misbehavingServerPath, "--before-initialize", "silent", "--log", log])], { probeTimeoutMs: 300 });
    expect(statusOf(pool, "s")).toMatchObject({ state: "ready", protocol: "2025-11-25" });
    expect(textOf(await pool.callTool("s", "echo", { text: "late" }))).toBe("late");
    expect(pids(log)).toBe(1);
  });
});

describe("a downstream server's era over HTTP", () => {
  it("finds a modern-only HTTP server 2026-07-28", async () => {
    const log = logFile(dirs);
    const pool = await startPool([httpSpec("hm", await startModernHttp(children, ["--legacy", "reject", "--log", log]))]);
    expect(textOf(await pool.callTool("hm", "echo", { text: "over http" }))).toBe("over http");
    expect(statusOf(pool, "hm")).toMatchObject({ protocol: "2026-07-28", era: { kind: "modern" } });
    expect(requests(log).map((r) => r.method)).not.toContain("initialize");
  });

  it("finds a 2025 HTTP server 2025-11-25", async () => {
    const url = await startHttpServer(children);
    const pool = await startPool([httpSpec("hl", `${url}/mcp`)]);
    expect(textOf(await pool.callTool("hl", "echo", { text: "x" }))).toBe("x");
    expect(statusOf(pool, "hl")).toMatchObject({ protocol: "2025-11-25", era: { kind: "legacy" } });
  });

  it("gives a slow HTTP server the connect time, not the stdio probe's short wait", async () => {
    const pool = await startPool([httpSpec("slow", await startModernHttp(children, ["--legacy", "reject", "--delay-ms", "600"]))], { probeTimeoutMs: 300 });
    expect(statusOf(pool, "slow")).toMatchObject({ state: "ready", protocol: "2026-07-28" });
  });

  it("never takes a silent HTTP server for a 2025 one: it is an outage (after connectTimeoutMs, not the stdio probe's wait), and no verdict is kept", async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const pool = await startPool([httpSpec("hs", `http://127.0.0.1:${(silent.address() as AddressInfo).port}/mcp`, { connectTimeoutMs: 1_000 })], {
        probeTimeoutMs: 300,
      });
      const status = statusOf(pool, "hs");
      expect(status).toMatchObject({ state: "failed", error: "did not finish connecting within 1000 ms" });
      expect(status.era).toBeUndefined();
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });

  it("never takes a 401 for an era: the server needs a login and no verdict is kept", async () => {
    const url = await startHttpServer(children, { ...process.env, MISBEHAVING_REQUIRE_HEADER: "x-key" });
    const pool = await startPool([httpSpec("ha", `${url}/mcp`)]);
    const status = statusOf(pool, "ha");
    expect(status.state).toBe("failed");
    expect(status.error).toMatch(/401/);
    expect(status.era).toBeUndefined();
  });
});

describe("the era verdict, remembered", () => {
  it("is passed back on restart: no second probe after the process dies", async () => {
    const log = logFile(dirs);
    const pool = await startPool([spec("m", [modernServerPath, "--legacy", "reject", "--log", log])], {
      backoff: { initialMs: 10, maxMs: 10, maxAttempts: 3 },
    });
    await pool.callTool("m", "crash").catch(() => undefined);
    await until(() => statusOf(pool, "m").restarts === 1 && statusOf(pool, "m").state === "ready");
    expect(textOf(await pool.callTool("m", "echo", { text: "again" }))).toBe("again");
    expect(pids(log)).toBe(2);
    expect(probes(log)).toBe(1);
  });

  it("given from an earlier run (priorEra), is used without a probe", async () => {
    const first = logFile(dirs);
    const earlier = await startPool([spec("m", [modernServerPath, "--legacy", "reject", "--log", first])]);
    const era = statusOf(earlier, "m").era as RememberedEra;
    await earlier.close();
    const log = logFile(dirs);
    const pool = await startPool([spec("m", [modernServerPath, "--legacy", "reject", "--log", log])], { priorEra: () => era });
    expect(textOf(await pool.callTool("m", "echo", { text: "no probe" }))).toBe("no probe");
    expect(statusOf(pool, "m").protocol).toBe("2026-07-28");
    expect(probes(log)).toBe(0);
  });

  it("re-probes a stale 2026 verdict against a 2025 server, which then works as 2025", async () => {
    const earlier = await startPool([spec("m", [modernServerPath, "--legacy", "reject"])]);
    const era = statusOf(earlier, "m").era as RememberedEra;
    await earlier.close();
    const log = logFile(dirs);
    const pool = await startPool([spec("m", [misbehavingServerPath, "--log", log])], { priorEra: () => era });
    expect(statusOf(pool, "m")).toMatchObject({ state: "ready", protocol: "2025-11-25", era: { kind: "legacy" } });
    expect(textOf(await pool.callTool("m", "echo", { text: "legacy now" }))).toBe("legacy now");
    expect(probes(log)).toBe(1);
  });

  it("re-probes a stale 2025 verdict against a modern-only server (-32022 at connect), which then works as 2026", async () => {
    const pool = await startPool([spec("m", [modernServerPath, "--legacy", "reject"])], { priorEra: () => ({ kind: "legacy", at: Date.now() }) });
    expect(statusOf(pool, "m")).toMatchObject({ state: "ready", protocol: "2026-07-28", era: { kind: "modern" } });
    expect(textOf(await pool.callTool("m", "echo", { text: "modern now" }))).toBe("modern now");
  });

  it("probes again when a remembered 2025 verdict is older than a day", async () => {
    const pool = await startPool([spec("d", [modernServerPath, "--legacy", "serve"])], {
      priorEra: () => ({ kind: "legacy", at: Date.now() - 25 * 3_600_000 }),
    });
    expect(statusOf(pool, "d").protocol).toBe("2026-07-28");
  });

  it.each([
    { version: "1.0.0", protocol: "2026-07-28" },
    { version: "2.0.0", protocol: "2025-11-25" },
  ])(
    "probes again a fresh 2025 verdict found with another serverInfo.version ($version; the server is 2.0.0 now): $protocol",
    async ({ version, protocol }) => {
      const pool = await startPool([spec("d", [modernServerPath, "--legacy", "serve"])], { priorEra: () => ({ kind: "legacy", at: Date.now(), version }) });
      expect(statusOf(pool, "d")).toMatchObject({ state: "ready", protocol });
      // The verdict kept names the version it was found with, so the next start compares against it.
      if (protocol === "2025-11-25") expect(statusOf(pool, "d").era).toMatchObject({ kind: "legacy", version: "2.0.0" });
    },
  );

  it("keeps the serverInfo.version with a 2025 verdict it finds", async () => {
    const pool = await startPool([spec("l", [misbehavingServerPath])]);
    expect(statusOf(pool, "l").era).toMatchObject({ kind: "legacy", version: expect.any(String) });
  });
});

describe("the calling client's capabilities", () => {
  const relay = { capabilities: { elicitation: {}, sampling: {} }, handle: async () => ({}) };

  it("reach a 2026 server in the request's _meta, only those codemux relays, with the Tasks extension codemux follows", async () => {
    const pool = await startPool([spec("m", [modernServerPath, "--legacy", "reject"])], { relay });
    const seen = JSON.parse(textOf(await pool.callTool("m", "whoami", {}, { clientCapabilities: { elicitation: { form: {} }, roots: {} } })));
    expect(seen.clientCapabilities).toEqual({ elicitation: { form: {} }, extensions: { "io.modelcontextprotocol/tasks": {} } });
  });

  it("carry the MCP Apps extension to a 2026 server only when the caller declared it, and no other of the caller's extensions", async () => {
    const pool = await startPool([spec("m", [modernServerPath, "--legacy", "reject"])], { relay });
    const apps = { mimeTypes: ["text/html;profile=mcp-app"] };
    const declared = { extensions: { "io.modelcontextprotocol/ui": apps, "example.com/other": {} } };
    const seen = JSON.parse(textOf(await pool.callTool("m", "whoami", {}, { clientCapabilities: declared })));
    expect(seen.clientCapabilities).toEqual({ extensions: { "io.modelcontextprotocol/ui": apps, "io.modelcontextprotocol/tasks": {} } });
  });

  it.each([{ callLane: true }, { callLane: false }])("never reach a 2025 server (callLane: $callLane)", async ({ callLane }) => {
    const rawServer = new URL("./fixtures/raw-server.mjs", import.meta.url).pathname;
    const pool = await startPool([spec("r", [], { transport: { type: "stdio", command: process.execPath, args: [rawServer], env: {} } })], {
      relay,
      callLane,
    });
    await pool.callTool("r", "echo", { text: "x" }, { clientCapabilities: { elicitation: {} } });
    const seen = JSON.parse(textOf(await pool.callTool("r", "seen"))) as Array<{ method: string; meta: string[] }>;
    for (const request of seen.filter((s) => s.method !== "server/discover"))
      expect(request.meta.filter((key) => key.startsWith("io.modelcontextprotocol/"))).toEqual([]);
  });
});

describe("a 2026 server's input_required answer", () => {
  it("comes back to a caller that takes it, never to the relay, and the retry with the answers and the state completes the call", async () => {
    const asked: string[] = [];
    const relay = { capabilities: { elicitation: {} }, handle: async (_server: string, request: { method: string }) => (asked.push(request.method), {}) };
    const pool = await startPool([spec("m", [modernServerPath, "--legacy", "reject"])], { relay });
    const first = await pool.callTool("m", "ask", { message: "hi" }, { inputRequired: {}, clientCapabilities: { elicitation: {} } });
    expect(first).toMatchObject({ resultType: "input_required", content: [], requestState: "ask:hi", inputRequests: { q: { method: "elicitation/create" } } });
    const answer = { action: "accept", content: { answer: "yes" } };
    const retried = await pool.callTool("m", "ask", { message: "hi" }, { inputRequired: { inputResponses: { q: answer }, requestState: "ask:hi" } });
    expect(JSON.parse(textOf(retried))).toEqual({ asked: "hi", answer });
    // A caller that does not take it gets an error: the SDK's handlers, which know no call, never ask.
    await expect(pool.callTool("m", "ask", { message: "hi" }, { clientCapabilities: { elicitation: {} } })).rejects.toThrow(/input_required/);
    expect(asked).toEqual([]);
  });
});

describe("a 2026 server's result without resultType", () => {
  it("is taken as complete, as the referee's own 2026 fixture answers (its tools/call results carry none)", async () => {
    const pool = await startPool([httpSpec("c", await startConformanceServer(children))]);
    expect(statusOf(pool, "c")).toMatchObject({ protocol: "2026-07-28" });
    const result = await pool.callTool("c", "test_image_content", {});
    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([expect.objectContaining({ type: "image", mimeType: "image/png" })]);
  });
});

describe("a 2026 server's tools/list ttlMs", () => {
  it("drives re-listing sooner than the configured refresh interval", async () => {
    const pool = await startPool([spec("m", [modernServerPath, "--legacy", "reject", "--ttl-ms", "100"], { refreshIntervalMs: 600_000 })], {
      minListTtlMs: 50,
    });
    await pool.callTool("m", "add_tool", { name: "later" });
    await until(() => pool.tools().some((entry) => entry.server === "m" && entry.tools.some((t) => t.name === "later")));
  });
});
