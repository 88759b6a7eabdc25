import { haveProgram, misbehavingEntry, startRedisServer, type RedisServer } from "@codemux/test-servers";
import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callInFlight } from "./in-flight";
import { serveCli, stopAll } from "./serve-cli";

const TOKEN = "drain-scale-out-token-0123456789";
const AUTH = { authorization: `Bearer ${TOKEN}` };
const MCP_HEADERS = { ...AUTH, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" };
const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "late", version: "1.0.0" } },
};

describe.skipIf(!haveProgram("redis-server", "redis-server"))("an instance draining on Redis stays registered until it exits", () => {
  let dir: string;
  let redis: RedisServer;
  const started: ChildProcess[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "codemux-scale-out-drain-"));
    redis = await startRedisServer();
    await writeFile(join(dir, "codemux.json"), JSON.stringify({ mcpServers: { m: misbehavingEntry("m") } }));
  }, 30_000);

  afterAll(async () => {
    await stopAll(started, "SIGKILL");
    await redis?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  async function startInstance(id: string) {
    const home = await mkdtemp(join(dir, `home-${id}-`));
    const env = { ...process.env, CODEMUX_HOME: home, CODEMUX_STORE: redis.url, CODEMUX_TOKEN: `alice:${TOKEN}` };
    const args = ["serve", "--http", "127.0.0.1:0", "--config", join(dir, "codemux.json"), "--instance-id", id, "--drain-ms", "60000"];
    return serveCli(args, { cwd: dir, env, started });
  }

  it("serves a request for one of its sessions forwarded while it drains, refuses a new session, and is gone once it exits", async () => {
    const [a, b] = [await startInstance("a"), await startInstance("b")];
    const exited = new Promise((resolve) => a.child.once("exit", resolve));
    // A call in flight on a keeps its drain going until the client gives up on it.
    const { client, answer, session } = await callInFlight(a.url, AUTH, { tool: "m__slow", args: { ms: 120_000, steps: 120 } });
    expect(session).toMatch(/^a\./);
    a.child.kill("SIGTERM");
    // The signal is handled asynchronously: draining once /readyz stops answering 200.
    for (let status = 200; status === 200; ) status = (await fetch(`${a.url}/readyz`, { headers: AUTH })).status;

    const onSession = (base: string) =>
      fetch(`${base}/mcp`, {
        method: "POST",
        headers: { ...MCP_HEADERS, "mcp-session-id": session },
        body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list" }),
      });
    // Sent to b, the request is forwarded to a, which still holds the session while it drains.
    const forwarded = await onSession(b.url);
    expect(forwarded.status).toBe(200);
    expect(await forwarded.text()).toContain("search_tools");
    const late = await fetch(`${a.url}/mcp`, { method: "POST", headers: MCP_HEADERS, body: JSON.stringify(INITIALIZE) });
    expect(late.status).toBe(503);
    expect(((await late.json()) as { error: { message: string } }).error.message).toContain("takes no new MCP sessions");

    await client.close().catch(() => undefined);
    await answer;
    await exited;
    // Once it has exited, b says "gone".
    const gone = await onSession(b.url);
    expect(gone.status).toBe(404);
    expect(((await gone.json()) as { error: { message: string } }).error.message).toMatch(/the instance holding this session \(a\) is gone/);
  }, 60_000);
});
