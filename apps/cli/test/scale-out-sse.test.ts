import { haveProgram, misbehavingEntry, startRedisServer, until, type Nginx, type RedisServer } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import type { ChildProcess } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { textOf } from "./in-flight";
import { endParts, startBalancer } from "./scale-out-parts";
import { serveCli } from "./serve-cli";

const haveParts = haveProgram("redis-server", "redis-server") && haveProgram("nginx", "nginx-light");

const ALICE = "alice-sse-scale-out-token-0123456789";
const BOB = "bob-sse-scale-out-token-0123456789";
const SESSION_ID = /[?&]sessionId=([^&]+)/;

type Instance = { id: string; url: string; child: ChildProcess; stderr: () => string };

/** A legacy SSE stream read by hand: its `endpoint` event, then each `message` event's JSON. */
async function openStream(base: string, token: string) {
  const controller = new AbortController();
  const response = await fetch(`${base}/sse`, { headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" }, signal: controller.signal });
  expect(response.status).toBe(200);
  const reader = (response.body as ReadableStream<Uint8Array>).pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  const nextEvent = async (): Promise<{ event: string; data: string }> => {
    for (;;) {
      const end = buffered.indexOf("\n\n");
      if (end >= 0) {
        const block = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (event !== undefined && data !== undefined) return { event, data };
        continue;
      }
      const { value, done } = await reader.read();
      if (done) throw new Error("the stream ended");
      buffered += value;
    }
  };
  const endpoint = await nextEvent();
  expect(endpoint.event).toBe("endpoint");
  return {
    endpoint: endpoint.data,
    sessionId: SESSION_ID.exec(endpoint.data)?.[1] as string,
    nextMessage: async () => JSON.parse((await nextEvent()).data) as { id?: number; result?: unknown },
    close: () => controller.abort(),
  };
}

describe.skipIf(!haveParts)("legacy HTTP+SSE sessions on two codemux instances behind nginx", () => {
  let dir: string;
  let redis: RedisServer;
  let nginx: Nginx;
  const started: ChildProcess[] = [];
  const instances: Instance[] = [];
  const clients: Client[] = [];

  const post = (target: string, token: string, message: unknown) =>
    fetch(target, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(message),
    });
  const forwardedLines = (instance: Instance) =>
    instance
      .stderr()
      .split("\n")
      .filter((line) => line.includes('"forwardedTo"'));

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "codemux-scale-out-sse-"));
    redis = await startRedisServer();
    await writeFile(join(dir, "codemux.json"), JSON.stringify({ mcpServers: { m: misbehavingEntry("m") } }));
    for (const id of ["a", "b"]) {
      const home = await mkdtemp(join(dir, `home-${id}-`));
      const env = { ...process.env, CODEMUX_HOME: home, CODEMUX_STORE: redis.url };
      const args = [
        "serve",
        "--http",
        "127.0.0.1:0",
        "--config",
        join(dir, "codemux.json"),
        "--instance-id",
        id,
        "--token",
        `alice:${ALICE}`,
        "--token",
        `bob:${BOB}`,
      ];
      instances.push({ id, ...(await serveCli(args, { cwd: dir, env, started })) });
    }
    nginx = await startBalancer(instances);
  }, 60_000);

  afterAll(() => endParts({ dir, redis, nginx, started, clients }));

  it("opens SDK 1.x SSE sessions through nginx on both instances, their ids carrying the instance, and routes each post to its instance", async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 6 && seen.size < 2; i++) {
      const posts: string[] = [];
      const auth = { authorization: `Bearer ${ALICE}` };
      const transport = new SSEClientTransport(new URL(`${nginx.url}/sse`), {
        requestInit: { headers: auth },
        eventSourceInit: { fetch: (url, init) => fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), ...auth } }) },
        fetch: (url, init) => {
          posts.push(String(url));
          return fetch(url, init);
        },
      });
      const client = new Client({ name: "legacy-behind-nginx", version: "1.0.0" });
      clients.push(client);
      await client.connect(transport);
      expect(textOf(await client.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: `hi ${i}` } } }))).toBe(`hi ${i}`);
      const ids = new Set(posts.map((url) => SESSION_ID.exec(url)?.[1]));
      expect(ids.size).toBe(1);
      const [id = ""] = ids as Set<string>;
      expect(id).toMatch(/^[ab]\.[0-9a-f-]{36}$/);
      seen.add(id.slice(0, 1));
    }
    expect([...seen].sort()).toEqual(["a", "b"]);
    // nginx sent every post to the instance holding its session: each logged posts, none needed forwarding.
    for (const instance of instances) {
      await until(() => instance.stderr().includes('"path":"/messages?sessionId='));
      expect(forwardedLines(instance)).toEqual([]);
    }
  }, 60_000);

  it("forwards a post sent to the other instance to the one holding the session, for its own principal only", async () => {
    const [a, b] = instances as [Instance, Instance];
    const stream = await openStream(a.url, ALICE);
    expect(stream.sessionId).toMatch(/^a\./);
    const initialize = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2024-11-05", capabilities: {}, clientInfo: { name: "raw", version: "1.0.0" } },
    };
    const accepted = await post(`${b.url}${stream.endpoint}`, ALICE, initialize);
    expect(accepted.status).toBe(202);
    expect(await stream.nextMessage()).toMatchObject({ id: 1, result: { serverInfo: expect.any(Object) } });
    // b's log line for the post is written as its answer ends, maybe just after the client has it.
    await until(() => forwardedLines(b).some((line) => line.includes('"forwardedTo":"a"')));
    // Forwarding changes nothing of who owns a session: another principal is told what an unknown id gets.
    const stranger = await post(`${b.url}${stream.endpoint}`, BOB, { jsonrpc: "2.0", id: 2, method: "tools/list" });
    expect(stranger.status).toBe(404);
    expect(((await stranger.json()) as { error: { message: string } }).error.message).toBe("Session not found: open a new stream with GET /sse.");
    stream.close();
  });

  it("answers a post for an instance that is not registered, or killed, with a sentence saying it is gone", async () => {
    const [a, b] = instances as [Instance, Instance];
    const unknown = await post(`${b.url}/messages?sessionId=zz.00000000-0000-4000-8000-000000000000`, ALICE, { jsonrpc: "2.0", id: 1, method: "ping" });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { message: string } }).error.message).toBe(
      "Session not found: the instance holding this session (zz) is gone. Open a new stream with GET /sse.",
    );
    const stream = await openStream(a.url, ALICE);
    a.child.kill("SIGKILL");
    await new Promise((resolve) => a.child.once("exit", resolve));
    const gone = await post(`${b.url}${stream.endpoint}`, ALICE, { jsonrpc: "2.0", id: 1, method: "ping" });
    expect(gone.status).toBe(404);
    expect(((await gone.json()) as { error: { message: string } }).error.message).toBe(
      "Session not found: the instance holding this session (a) is gone. Open a new stream with GET /sse.",
    );
    stream.close();
  });
});
