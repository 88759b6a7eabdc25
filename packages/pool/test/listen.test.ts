import { modernServerPath, until } from "@codemux/test-servers";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { MAX_LISTEN_RESOURCES } from "../src/defaults";
import { ServerPool, type DownstreamNotification, type PoolOptions, type ServerSpec } from "../src/index";
import { cleanedAfterEach, httpSpec, logFile, recordingLogger, startModernHttp } from "./helpers";

const { pools, children, dirs } = cleanedAfterEach();

/** A pool that never re-lists on an interval: a change it sees came on the listen stream. */
async function startPool(spec: ServerSpec, options: PoolOptions = {}): Promise<ServerPool> {
  const pool = new ServerPool([{ ...spec, refreshIntervalMs: 0 }], { retryDelaysMs: [], listChangedDebounceMs: 10, backoff: { initialMs: 20 }, ...options });
  pools.push(pool);
  await pool.start();
  return pool;
}

/** How many listen streams the server was asked to open. */
const listens = (log: string) => (readFileSync(log, "utf8").match(/ subscriptions\/listen$/gm) ?? []).length;
const toolNames = (pool: ServerPool) => pool.tools().flatMap((entry) => entry.tools.map((t) => t.name));

const stdio = (log: string): ServerSpec => ({
  name: "m",
  transport: { type: "stdio", command: process.execPath, args: [modernServerPath, "--legacy", "reject", "--list-changed", "--log", log], env: {} },
  callTimeoutMs: 10_000,
  connectTimeoutMs: 10_000,
  tools: {},
});

describe("a 2026-07-28 server's change notifications (subscriptions/listen)", () => {
  it("over stdio: a tool it adds reaches the catalog without a reconnect", async () => {
    const log = logFile(dirs);
    const pool = await startPool(stdio(log));
    await until(() => listens(log) === 1);
    await pool.callTool("m", "add_tool", { name: "heard_on_stdio" });
    await until(() => toolNames(pool).includes("heard_on_stdio"));
    expect(pool.status()[0]).toMatchObject({ state: "ready", protocol: "2026-07-28", restarts: 0 });
  });

  it("over HTTP: a tool it adds reaches the catalog, and a resource list change is passed on as a 2025 server's is", async () => {
    const log = logFile(dirs);
    const pool = await startPool(httpSpec("m", await startModernHttp(children, ["--legacy", "reject", "--list-changed", "--log", log])));
    await until(() => listens(log) === 1);
    const heard: DownstreamNotification[] = [];
    pool.on("notification", (_server, notification) => heard.push(notification));
    await pool.callTool("m", "add_tool", { name: "heard_on_http" });
    await pool.callTool("m", "add_resource", { uri: "test://added" });
    await until(() => toolNames(pool).includes("heard_on_http") && heard.length > 0);
    expect(heard.map((n) => n.method)).toEqual(["notifications/resources/list_changed"]);
    expect(pool.status()[0]!.restarts).toBe(0);
  });

  it("reopens a listen stream that drops while the connection lives, and hears on the new one", async () => {
    const log = logFile(dirs);
    const pool = await startPool(httpSpec("m", await startModernHttp(children, ["--legacy", "reject", "--list-changed", "--log", log])));
    await until(() => listens(log) === 1);
    await pool.callTool("m", "end_listens");
    await until(() => listens(log) === 2);
    await pool.callTool("m", "add_tool", { name: "heard_after_the_drop" });
    await until(() => toolNames(pool).includes("heard_after_the_drop"));
    expect(pool.status()[0]!.restarts).toBe(0);
  });

  it("ends the stream with the connection (a lazy server stopped when idle), and does not try to reopen it", async () => {
    const log = logFile(dirs);
    const { lines, logger } = recordingLogger();
    const url = await startModernHttp(children, ["--legacy", "reject", "--list-changed", "--log", log]);
    const pool = await startPool(httpSpec("m", url, { lazy: true, idleStopMs: 50 }), { logger });
    await pool.callTool("m", "echo", { text: "start it" });
    await until(() => listens(log) === 1 && pool.status()[0]!.state === "idle");
    await until(() => readFileSync(log, "utf8").includes(" listen-closed"));
    expect(lines.filter((line) => line.includes("reopening"))).toEqual([]);
  });

  it("takes a resource subscription into the stream's filter, and refuses one past the bound or to a server that offers none", async () => {
    const log = logFile(dirs);
    const pool = await startPool(stdio(log));
    await until(() => listens(log) === 1);
    const client = await pool.client("m");
    const uris = Array.from({ length: MAX_LISTEN_RESOURCES + 1 }, (_, i) => `test://r${i}`);
    const results = await Promise.allSettled(uris.map((uri) => client.subscribeResource({ uri })));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(MAX_LISTEN_RESOURCES);
    expect(results.at(-1)).toMatchObject({ status: "rejected", reason: { code: "SUBSCRIPTION_LIMIT" } });
    // Subscriptions made together are taken by one more stream each time, not one stream each.
    expect(listens(log)).toBeLessThanOrEqual(3);
    // An unsubscribed URI frees its place.
    await client.unsubscribeResource({ uri: "test://r0" });
    await expect(client.subscribeResource({ uri: `test://r${MAX_LISTEN_RESOURCES}` })).resolves.toEqual({});

    const plainLog = logFile(dirs);
    const plain = await startPool({
      ...stdio(plainLog),
      name: "p",
      transport: { ...stdio(plainLog).transport, args: [modernServerPath, "--legacy", "reject"] } as ServerSpec["transport"],
    });
    await expect((await plain.client("p")).subscribeResource({ uri: "test://any" })).rejects.toThrow(/offers no resource subscriptions/);
  });

  it("takes an unsubscribed URI out of the stream's filter, and ends the stream when nothing is left to listen for", async () => {
    const log = logFile(dirs);
    const pool = await startPool(httpSpec("m", await startModernHttp(children, ["--legacy", "reject", "--subscribe-only", "--log", log])));
    const client = await pool.client("m");
    expect(listens(log)).toBe(0);
    await client.subscribeResource({ uri: "test://a" });
    await client.subscribeResource({ uri: "test://b" });
    await client.unsubscribeResource({ uri: "test://a" });
    expect(readFileSync(log, "utf8").match(/listen-resources .*$/gm)).toEqual([
      'listen-resources ["test://a"]',
      'listen-resources ["test://a","test://b"]',
      'listen-resources ["test://b"]',
    ]);
    await client.unsubscribeResource({ uri: "test://b" });
    await until(() => (readFileSync(log, "utf8").match(/ listen-closed$/gm) ?? []).length === 3);
    expect(listens(log)).toBe(3);
  });

  it("does not ask again a server that refuses the stream: its tools are re-listed on the interval instead", async () => {
    const log = logFile(dirs);
    const { lines, logger } = recordingLogger();
    const spec = stdio(log);
    const args = [modernServerPath, "--legacy", "reject", "--list-changed", "--max-listens", "0", "--log", log];
    const pool = new ServerPool([{ ...spec, transport: { ...spec.transport, args } as ServerSpec["transport"], refreshIntervalMs: 100 }], {
      logger,
      minListTtlMs: 50,
      backoff: { initialMs: 20 },
    });
    pools.push(pool);
    await pool.start();
    await until(() => lines.some((line) => line.includes("refused to open a listen stream")));
    await pool.callTool("m", "add_tool", { name: "found_by_re_listing" });
    await until(() => toolNames(pool).includes("found_by_re_listing"));
    expect(listens(log)).toBe(1);
  });

  it("opens no stream to a server that declares no list changes", async () => {
    const log = logFile(dirs);
    const spec = stdio(log);
    const pool = await startPool({
      ...spec,
      transport: { ...spec.transport, args: [modernServerPath, "--legacy", "reject", "--log", log] } as ServerSpec["transport"],
    });
    await pool.callTool("m", "echo", { text: "after the start" });
    expect(listens(log)).toBe(0);
  });
});
