import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { loadPlugins } from "@codemux/hooks";
import { createJobs } from "@codemux/jobs";
import { Codemux, VERSION, policiesOf } from "@codemux/server";
import { askingServerPath } from "@codemux/test-servers";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CodemuxHttpServer } from "../src/index";
import { TOKENS, bearer, config, misbehaving, raw, serve, textOf, type Served } from "./helpers";

const MODERN = "2026-07-28";

/** The 2026-07-28 envelope a request carries in `_meta`. */
function envelope(capabilities: Record<string, unknown> = {}, version = MODERN): Record<string, unknown> {
  return {
    "io.modelcontextprotocol/protocolVersion": version,
    "io.modelcontextprotocol/clientInfo": { name: "raw", version: "0" },
    "io.modelcontextprotocol/clientCapabilities": capabilities,
  };
}

let nextId = 1;

interface RawAnswer {
  status: number;
  headers: Headers;
  /** The JSON body, or the messages of an SSE stream in order. */
  messages: Array<Record<string, unknown>>;
}

/** Sends one 2026-07-28 POST to `url` as a client does (headers and envelope); `change` breaks it on purpose (a null header or meta is left out). */
const modernAt = (url: string) =>
  async function modernPost(
    method: string,
    params: Record<string, unknown> = {},
    change: { headers?: Record<string, string | null>; meta?: Record<string, unknown> | null; token?: string | null } = {},
  ): Promise<RawAnswer> {
    const meta = change.meta === null ? undefined : (change.meta ?? envelope());
    const body = { jsonrpc: "2.0", id: nextId++, method, params: { ...params, ...(meta ? { _meta: meta } : {}) } };
    const headers: Record<string, string | null> = {
      ...(change.token === null ? {} : bearer(change.token ?? TOKENS.alice)),
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": MODERN,
      "mcp-method": method,
      ...(typeof params.name === "string" ? { "mcp-name": params.name } : {}),
      ...change.headers,
    };
    const sent = Object.fromEntries(Object.entries(headers).filter((entry): entry is [string, string] => entry[1] !== null));
    const response = await fetch(`${url}/mcp`, { method: "POST", headers: sent, body: JSON.stringify(body) });
    const text = await response.text();
    const messages = response.headers.get("content-type")?.startsWith("text/event-stream")
      ? text
          .split("\n")
          .filter((line) => line.startsWith("data: ") && line.length > 6)
          .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>)
      : text
        ? [JSON.parse(text) as Record<string, unknown>]
        : [];
    return { status: response.status, headers: response.headers, messages };
  };

type Answer = { result?: Record<string, unknown>; error?: { code: number; message: string; data?: Record<string, unknown> } };
const answerOf = (answer: RawAnswer) => answer.messages.at(-1) as Answer;

/** The SDK v2 client negotiating its era (`auto`), as `token`'s principal. */
async function modernClient(url: string, token: string): Promise<ModernClient> {
  const client = new ModernClient({ name: "modern", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
  await client.connect(new ModernTransport(new URL(`${url}/mcp`), { requestInit: { headers: bearer(token) } }));
  return client;
}

/** The SDK 1.x client (2025 era, a session), as `token`'s principal. */
async function legacyClient(url: string, token: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: "legacy", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: bearer(token) } });
  await client.connect(transport);
  return { client, transport };
}

const echo = (text: string) => ({ name: "call_tool", arguments: { name: "m__echo", args: { text } } });

/** The value of a gauge without labels on /metrics. */
async function gauge(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`, { headers: bearer(TOKENS.alice) })).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return Number(line?.split(" ")[1]);
}

describe("2026-07-28 and 2025 clients on one /mcp", () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve();
  });
  afterAll(async () => {
    await s?.close();
  });

  it("the SDK v2 client (auto) gets 2026-07-28 and the SDK 1.x client its 2025 session, at once, both searching and calling", async () => {
    const [modern, legacy] = await Promise.all([modernClient(s.url, TOKENS.alice), legacyClient(s.url, TOKENS.bob)]);
    expect(modern.getNegotiatedProtocolVersion()).toBe(MODERN);
    expect(legacy.transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const run = async (client: Pick<Client, "callTool">, tag: string) => [
      textOf(await client.callTool({ name: "search_tools", arguments: { query: "echo text" } })),
      ...(await Promise.all(Array.from({ length: 5 }, (_, i) => client.callTool(echo(`${tag}${i}`)).then(textOf)))),
    ];
    const [fromModern, fromLegacy] = await Promise.all([run(modern as unknown as Client, "m"), run(legacy.client, "l")]);
    expect(fromModern[0]).toContain("m__echo");
    expect(fromLegacy[0]).toContain("m__echo");
    expect(fromModern.slice(1)).toEqual(["m0", "m1", "m2", "m3", "m4"]);
    expect(fromLegacy.slice(1)).toEqual(["l0", "l1", "l2", "l3", "l4"]);
    await modern.close();
    await legacy.transport.terminateSession();
    await legacy.client.close();
  });

  it("a 2026-07-28 GET or DELETE gets 405 (Allow: POST); a 2025 GET without a session is answered as before", async () => {
    for (const method of ["GET", "DELETE"]) {
      const answer = await raw(`${s.url}/mcp`, { method, headers: { ...bearer(TOKENS.alice), accept: "text/event-stream", "mcp-protocol-version": MODERN } });
      expect(answer.status).toBe(405);
      expect(answer.headers.allow).toBe("POST");
      expect(JSON.parse(answer.body).error).toMatchObject({ code: -32600, message: expect.stringMatching(/no sessions: send each request as a POST/) });
    }
    const legacyGet = await raw(`${s.url}/mcp`, { headers: { ...bearer(TOKENS.alice), accept: "text/event-stream", "mcp-protocol-version": "2025-11-25" } });
    expect(legacyGet.status).toBe(400);
    expect(legacyGet.body).toContain("Mcp-Session-Id header is required");
  });

  it("a stray Mcp-Session-Id or Last-Event-ID on a 2026-07-28 POST is ignored (a 2025 one with an unknown session gets 404)", async () => {
    const stray = { "mcp-session-id": "00000000-0000-0000-0000-000000000000", "last-event-id": "0_1" };
    const answer = await modernAt(s.url)("tools/call", echo("stray"), { headers: stray });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("mcp-session-id")).toBeNull();
    expect((answerOf(answer).result?.content as Array<{ text: string }>)[0]?.text).toBe("stray");
    const legacy = await raw(`${s.url}/mcp`, {
      method: "POST",
      headers: { ...bearer(TOKENS.alice), ...stray, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    expect(legacy.status).toBe(404);
  });

  it("each request's server ends with its request, a listen stream's too: nothing stays attached", async () => {
    const listeners = s.core.listenerCount("toolsChanged");
    await modernAt(s.url)("server/discover");
    await modernAt(s.url)("tools/list");
    await modernAt(s.url)("tools/call", echo("x"));
    await modernAt(s.url)("tools/call", { name: "nope", arguments: {} });
    await modernAt(s.url)("resources/list");
    const client = await modernClient(s.url, TOKENS.bob);
    const subscription = await client.listen({ toolsListChanged: true });
    await subscription.close();
    await client.close();
    expect(await gauge(s.url, "codemux_mcp_request_servers")).toBe(0);
    expect(s.core.listenerCount("toolsChanged")).toBe(listeners);
  });
});

describe("--stateless", () => {
  it("serves 2025 clients as before (no session, no GET) and 2026-07-28 clients beside them", async () => {
    const s = await serve({ stateless: true });
    try {
      const [modern, legacy] = await Promise.all([modernClient(s.url, TOKENS.alice), legacyClient(s.url, TOKENS.alice)]);
      expect(modern.getNegotiatedProtocolVersion()).toBe(MODERN);
      expect(legacy.transport.sessionId).toBeUndefined();
      expect(textOf(await modern.callTool(echo("modern")))).toBe("modern");
      expect(textOf(await legacy.client.callTool(echo("legacy")))).toBe("legacy");
      const get = await raw(`${s.url}/mcp`, { headers: { ...bearer(TOKENS.alice), accept: "text/event-stream" } });
      expect(get.status).toBe(405);
      expect(JSON.parse(get.body).error.message).toMatch(/^This server is stateless/);
      await Promise.all([modern.close(), legacy.client.close()]);
    } finally {
      await s.close();
    }
  });
});

describe("what a 2026-07-28 client is answered", () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve();
  });
  afterAll(async () => {
    await s?.close();
  });

  it("server/discover: the version, codemux's capabilities and instructions, a private cache hint (instructions differ per principal) and serverInfo", async () => {
    const answer = await modernAt(s.url)("server/discover");
    expect(answer.status).toBe(200);
    const result = answerOf(answer).result as Record<string, unknown>;
    expect(result).toMatchObject({
      supportedVersions: [MODERN],
      capabilities: { tools: { listChanged: true }, resources: {}, prompts: {} },
      ttlMs: 60_000,
      cacheScope: "private",
      resultType: "complete",
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "codemux", version: VERSION } },
    });
    expect(result.instructions).toMatch(/search_tools finds tools.*Servers: m\./);
  });

  it("Mcp-Method or Mcp-Name missing or disagreeing with the body: 400 with -32020", async () => {
    const broken: Array<Record<string, string | null>> = [
      { "mcp-method": "tools/list" },
      { "mcp-name": "read_result" },
      { "mcp-name": null },
      { "mcp-method": null },
    ];
    for (const headers of broken) {
      const answer = await modernAt(s.url)("tools/call", echo("h"), { headers });
      expect(answer.status).toBe(400);
      expect(answerOf(answer).error?.code).toBe(-32020);
    }
  });

  it("a version codemux does not speak: 400 with -32022 and the supported list", async () => {
    const answer = await modernAt(s.url)("tools/list", {}, { meta: envelope({}, "2027-01-01"), headers: { "mcp-protocol-version": "2027-01-01" } });
    expect(answer.status).toBe(400);
    expect(answerOf(answer).error).toMatchObject({ code: -32022, data: { supported: [MODERN], requested: "2027-01-01" } });
  });

  it("an envelope without clientCapabilities: 400 with -32602", async () => {
    const { "io.modelcontextprotocol/clientCapabilities": _dropped, ...meta } = envelope();
    const answer = await modernAt(s.url)("tools/list", {}, { meta });
    expect(answer.status).toBe(400);
    expect(answerOf(answer).error?.code).toBe(-32602);
    expect(answerOf(answer).error?.message).toMatch(/clientCapabilities/);
  });

  it("a tool codemux does not expose is the same JSON-RPC -32602 in both eras, naming only the tools that client is offered", async () => {
    const legacy = await legacyClient(s.url, TOKENS.alice);
    const offered = (await legacy.client.listTools()).tools.map((tool) => tool.name);
    const expected = (name: string) =>
      `Unknown tool "${name}": this client is offered ${offered.join(", ")}; a downstream tool is called through call_tool or execute_code.`;
    for (const name of ["nope", "m__echo", "agent"]) {
      const answer = await modernAt(s.url)("tools/call", { name, arguments: {} });
      expect(answer.status).toBe(200);
      expect(answerOf(answer).error).toMatchObject({ code: -32602, message: expected(name) });
      const old = await legacy.client.callTool({ name, arguments: {} }).catch((error: unknown) => error);
      expect(old).toMatchObject({ code: -32602, message: `MCP error -32602: ${expected(name)}` });
    }
    expect(offered).not.toContain("agent");
    await legacy.client.close();
  });

  it("results carry resultType; lists are cached privately and briefly (they are filtered per principal)", async () => {
    const call = answerOf(await modernAt(s.url)("tools/call", echo("r"))).result;
    expect(call?.resultType).toBe("complete");
    for (const method of ["tools/list", "resources/list", "prompts/list", "resources/templates/list"]) {
      const result = answerOf(await modernAt(s.url)(method)).result;
      expect(result, method).toMatchObject({ resultType: "complete", ttlMs: 10_000, cacheScope: "private" });
    }
  });
});

describe("a 2026-07-28 request's own capabilities", () => {
  it("decide the tools it is listed: agent (it needs sampling) only for a request that declares sampling", async () => {
    const dir = await mkdtemp(join(tmpdir(), "codemux-eras-"));
    const jobs = createJobs({ dataDir: dir });
    const core = new Codemux({ config: config({ m: misbehaving() }), dataDir: dir, jobs: jobs.runner, metaTools: jobs.metaTools });
    core.start();
    const http = new CodemuxHttpServer(core, { port: 0, tokens: [{ name: "alice", token: TOKENS.alice }], log: () => undefined });
    await http.listen();
    try {
      const listed = async (capabilities: Record<string, unknown>) => {
        const answer = await modernAt(http.url)("tools/list", {}, { meta: envelope(capabilities) });
        return (answerOf(answer).result?.tools as Array<{ name: string }>).map((tool) => tool.name);
      };
      expect(await listed({ sampling: {} })).toContain("agent");
      expect(await listed({})).not.toContain("agent");
    } finally {
      await http.close();
      await jobs.close();
      await core.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("the audit log", () => {
  it("names the principal of a 2026-07-28 call, as it does a 2025 one's", async () => {
    const dir = await mkdtemp(join(tmpdir(), "codemux-eras-audit-"));
    const file = join(dir, "audit.jsonl");
    const plugins = await loadPlugins({ config: { plugins: { audit: { file } } }, configFile: join(dir, "codemux.json"), dataDir: dir });
    const core = new Codemux({ config: config({ m: misbehaving() }), middleware: [plugins.middleware] });
    core.start();
    await core.ready();
    const http = new CodemuxHttpServer(core, { port: 0, tokens: [{ name: "alice", token: TOKENS.alice }], log: () => undefined });
    await http.listen();
    try {
      const client = await modernClient(http.url, TOKENS.alice);
      expect(textOf(await client.callTool(echo("audited")))).toBe("audited");
      await client.close();
    } finally {
      await http.close();
      await core.close();
      await plugins.close();
    }
    const lines = (await readFile(file, "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toContainEqual(expect.objectContaining({ principal: "token:alice", server: "m", tool: "echo", outcome: "ok" }));
    await rm(dir, { recursive: true, force: true });
  });
});

describe("2026-07-28 requests pass auth, bounds, policies and limits as 2025 ones do", () => {
  const PEOPLE = { alice: "alice-token-eras-000001", bob: "bob-token-eras-00000002", carol: "carol-token-eras-000003" };
  let core: Codemux;
  let http: CodemuxHttpServer;
  beforeAll(async () => {
    const raw = {
      mcpServers: { m: misbehaving(), n: misbehaving("--name", "n") },
      policies: {
        rules: [
          { name: "m-only", principals: ["token:alice"], tools: ["m"] },
          { name: "n-only", principals: ["token:bob"], tools: ["n"] },
          { name: "metered", principals: ["token:carol"], tools: ["m__echo"], callsPerMinute: 1 },
        ],
      },
    };
    const policies = policiesOf(raw, "test");
    core = new Codemux({ config: config(raw.mcpServers), ...(policies ? { policies } : {}) });
    core.start();
    await core.ready();
    const tokens = Object.entries(PEOPLE).map(([name, token]) => ({ name, token }));
    http = new CodemuxHttpServer(core, { port: 0, tokens, maxBodyBytes: 4096, log: () => undefined });
    await http.listen();
  });
  afterAll(async () => {
    await http?.close();
    await core?.close();
  });

  it("no token or a wrong one: 401; a body over the bound: 413; a foreign Host: refused", async () => {
    expect((await modernAt(http.url)("tools/list", {}, { token: null })).status).toBe(401);
    expect((await modernAt(http.url)("tools/list", {}, { token: "wrong-token-0123456789" })).status).toBe(401);
    const big = await modernAt(http.url)(
      "tools/call",
      { name: "call_tool", arguments: { name: "m__echo", args: { text: "x".repeat(8000) } } },
      { token: PEOPLE.alice },
    );
    expect(big.status).toBe(413);
    const host = await raw(`${http.url}/mcp`, {
      method: "POST",
      headers: {
        ...bearer(PEOPLE.alice),
        host: "evil.example",
        "content-type": "application/json",
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/list",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: envelope() } }),
    });
    expect(host.status).toBe(403);
  });

  it("a result kept for one principal's call is theirs in their next request, and no other principal's", async () => {
    const [alice, bob] = await Promise.all([modernClient(http.url, PEOPLE.alice), modernClient(http.url, PEOPLE.bob)]);
    const big = textOf(await alice.callTool({ name: "call_tool", arguments: { name: "m__huge", args: { bytes: 100_000, lines: true } } }));
    const handle = /"(res_[0-9a-f]{12})"/.exec(big)?.[1];
    expect(handle).toBeDefined();
    // Another request, another server: the handle is the principal's, not the request's.
    expect(textOf(await alice.callTool({ name: "read_result", arguments: { handle, op: "head", lines: 1 } }))).toContain("line 1:");
    const stolen = await bob.callTool({ name: "read_result", arguments: { handle, op: "head", lines: 1 } });
    expect(stolen.isError).toBe(true);
    expect(textOf(stolen)).not.toContain("line 1:");
    await Promise.all([alice.close(), bob.close()]);
  });

  it("a JSON-RPC batch of 2026-07-28 requests is refused before any server is built", async () => {
    const one = (id: number) => ({ jsonrpc: "2.0", id, method: "tools/list", params: { _meta: envelope() } });
    const answer = await raw(`${http.url}/mcp`, {
      method: "POST",
      headers: {
        ...bearer(PEOPLE.alice),
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/list",
      },
      body: JSON.stringify(Array.from({ length: 10 }, (_, i) => one(i))),
    });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body).error.code).toBe(-32600);
    const metrics = await (await fetch(`${http.url}/metrics`, { headers: bearer(PEOPLE.alice) })).text();
    expect(metrics).toContain("\ncodemux_mcp_request_servers 0\n");
  });

  it("each principal sees and calls only what its policy gives it, and its call limit holds", async () => {
    const [alice, bob, carol] = await Promise.all([
      modernClient(http.url, PEOPLE.alice),
      modernClient(http.url, PEOPLE.bob),
      modernClient(http.url, PEOPLE.carol),
    ]);
    const search = async (client: ModernClient) => textOf(await client.callTool({ name: "search_tools", arguments: { query: "echo text", detail: "name" } }));
    expect(await search(alice)).toContain("m__echo");
    expect(await search(alice)).not.toContain("n__echo");
    expect(await search(bob)).toContain("n__echo");
    expect(await search(bob)).not.toContain("m__echo");
    const refused = await alice.callTool({ name: "call_tool", arguments: { name: "n__echo", args: { text: "x" } } });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/No tool named "n__echo"/);
    expect(textOf(await carol.callTool(echo("once")))).toBe("once");
    const limited = await carol.callTool(echo("twice"));
    expect(limited.isError).toBe(true);
    expect(textOf(limited)).toMatch(/^Rate limited: the policy rule "metered"/);
    await Promise.all([alice.close(), bob.close(), carol.close()]);
  });
});

describe("notifications to 2026-07-28 clients", () => {
  it("a client listening for tool list changes is told when a server's tools change", async () => {
    const s = await serve({ mode: "passthrough" });
    try {
      const client = await modernClient(s.url, TOKENS.alice);
      const changed: unknown[] = [];
      let told: () => void = () => undefined;
      const toldOnce = new Promise<void>((resolve) => {
        told = resolve;
      });
      client.setNotificationHandler("notifications/tools/list_changed", (notification) => {
        changed.push(notification);
        told();
      });
      const subscription = await client.listen({ toolsListChanged: true });
      expect(subscription.honoredFilter).toMatchObject({ toolsListChanged: true });
      await client.callTool({ name: "m__add_tool", arguments: { name: "fresh" } });
      await toldOnce;
      expect(changed[0]).toMatchObject({ method: "notifications/tools/list_changed" });
      const tools = await client.listTools(undefined, { cacheMode: "bypass" });
      expect(tools.tools.map((t) => t.name)).toContain("m__fresh");
      await subscription.close();
      await client.close();
    } finally {
      await s.close();
    }
  });

  it("a client listening for resource and prompt changes is told of them, and of an update to a resource it named", async () => {
    const s = await serve({}, { m: misbehaving("--resources") });
    try {
      const client = await modernClient(s.url, TOKENS.alice);
      const heard: string[] = [];
      let all: () => void = () => undefined;
      const three = new Promise<void>((resolve) => {
        all = resolve;
      });
      const note = (label: string) => () => {
        heard.push(label);
        if (heard.length === 3) all();
      };
      client.setNotificationHandler("notifications/resources/list_changed", note("resources"));
      client.setNotificationHandler("notifications/prompts/list_changed", note("prompts"));
      client.setNotificationHandler("notifications/resources/updated", (n) => note(`updated ${String(n.params.uri)}`)());
      const subscription = await client.listen({ resourcesListChanged: true, promptsListChanged: true, resourceSubscriptions: ["test://note"] });
      expect(subscription.honoredFilter).toMatchObject({ resourcesListChanged: true, promptsListChanged: true, resourceSubscriptions: ["test://note"] });
      await client.callTool({ name: "call_tool", arguments: { name: "m__change_lists", args: {} } });
      await three;
      expect(heard.sort()).toEqual(["prompts", "resources", "updated test://note"]);
      await subscription.close();
      await client.close();
    } finally {
      await s.close();
    }
  });

  it("progress of a call reaches that call's own stream", async () => {
    const s = await serve();
    try {
      const client = await modernClient(s.url, TOKENS.alice);
      const progress: number[] = [];
      const result = await client.callTool(
        { name: "call_tool", arguments: { name: "m__slow", args: { ms: 300, steps: 3 } } },
        {
          onprogress: (p) => progress.push(p.progress),
        },
      );
      expect(textOf(result)).toBe("slept 300 ms");
      expect(progress.slice(0, 2)).toEqual([1, 2]);
      await client.close();
    } finally {
      await s.close();
    }
  });

  it("a server's log line reaches the request that caused it only when that request set a logLevel, at or above it", async () => {
    const s = await serve({}, { a: { command: process.execPath, args: [askingServerPath] } });
    try {
      const logged = async (logLevel?: string) => {
        const meta = { ...envelope(), ...(logLevel ? { "io.modelcontextprotocol/logLevel": logLevel } : {}) };
        const answer = await modernAt(s.url)(
          "tools/call",
          { name: "call_tool", arguments: { name: "a__log", args: { data: "a line", when: "now" } } },
          { meta },
        );
        expect(answerOf(answer).result?.resultType).toBe("complete");
        return answer.messages.filter((m) => m.method === "notifications/message").map((m) => m.params);
      };
      expect(await logged()).toEqual([]);
      expect(await logged("info")).toEqual([{ level: "info", logger: "a/asking", data: "a line" }]);
      expect(await logged("error")).toEqual([]);
    } finally {
      await s.close();
    }
  });
});

describe("questions from servers to a 2026-07-28 client", () => {
  it("park the call when the calling request declares the capability (input_required), and are refused by its own capabilities when it does not", async () => {
    const s = await serve({}, { a: { command: process.execPath, args: [askingServerPath] } });
    try {
      const ask = async (capabilities: Record<string, unknown>) => {
        const answer = await modernAt(s.url)(
          "tools/call",
          { name: "call_tool", arguments: { name: "a__ask", args: { message: "your name?", when: "now" } } },
          { meta: envelope(capabilities) },
        );
        return answerOf(answer).result as { resultType?: string; inputRequests?: Record<string, unknown>; content?: Array<{ text: string }> };
      };
      expect((await ask({})).content?.[0]?.text).toMatch(/does not support elicitation\/create/);
      expect(await ask({ elicitation: {} })).toMatchObject({ resultType: "input_required", inputRequests: { q1: { method: "elicitation/create" } } });
    } finally {
      await s.close();
    }
  });
});

describe("listen streams are bounded per principal", () => {
  it("a principal holds as many as it may hold sessions (429 past them, saying which limit); another principal still listens", async () => {
    const s = await serve({ mode: "passthrough", maxSessionsPerPrincipal: 1 });
    try {
      const alice = await modernClient(s.url, TOKENS.alice);
      const first = await alice.listen({ toolsListChanged: true });
      const second = await modernAt(s.url)("subscriptions/listen", { notifications: { toolsListChanged: true } });
      expect(second.status).toBe(429);
      expect(answerOf(second).error?.message).toMatch(/^Principal "token:alice" already holds 1 open listen streams, its limit/);
      const bob = await modernClient(s.url, TOKENS.bob);
      const bobs = await bob.listen({ toolsListChanged: true });
      expect(bobs.honoredFilter).toMatchObject({ toolsListChanged: true });
      await first.close();
      // Once the server has seen that stream end (the client's close reaches it a moment later), alice may listen again.
      let again: Awaited<ReturnType<ModernClient["listen"]>> | undefined;
      for (let tries = 0; tries < 50 && !again; tries++) {
        again = await alice.listen({ toolsListChanged: true }).catch(() => new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 20)));
      }
      expect(again?.honoredFilter).toMatchObject({ toolsListChanged: true });
      await Promise.all([again?.close(), bobs.close()]);
      await Promise.all([alice.close(), bob.close()]);
    } finally {
      await s.close();
    }
  });
});

describe("an open listen stream", () => {
  it("is a stream, not a request being answered: requests in flight do not count it", async () => {
    const s = await serve({ mode: "passthrough" });
    try {
      const client = await modernClient(s.url, TOKENS.alice);
      const subscription = await client.listen({ toolsListChanged: true });
      expect(s.http.metrics.render()).toContain("codemux_http_requests_in_flight 0\n");
      await subscription.close();
      await client.close();
    } finally {
      await s.close();
    }
  });
});

describe("shutdown", () => {
  it("ends open listen streams at once rather than waiting out the grace for them", async () => {
    const s = await serve({ mode: "passthrough", shutdownGraceMs: 120_000 });
    const client = await modernClient(s.url, TOKENS.alice);
    const subscription = await client.listen({ toolsListChanged: true });
    // With the stream held open, this close would wait the whole 120 s grace and the test time out.
    await s.close();
    expect(await subscription.closed).not.toBe("local");
    await client.close();
  });
});

describe("server/discover starts nothing", () => {
  it("is answered while servers are not started (lazy) or still starting, and leaves them as they were", async () => {
    const core = new Codemux({
      config: config({ idle: { ...misbehaving(), lazy: true }, slow: misbehaving("--start-delay-ms", "60000") }),
      poolOptions: { deferStart: () => true },
    });
    core.start();
    const http = new CodemuxHttpServer(core, { port: 0, tokens: [{ name: "alice", token: TOKENS.alice }], log: () => undefined });
    await http.listen();
    try {
      const answer = await modernAt(http.url)("server/discover");
      expect(answer.status).toBe(200);
      expect(answerOf(answer).result?.instructions).toContain("Servers: idle, slow.");
      expect(core.status().map((server) => server.state)).toEqual(["idle", "connecting"]);
    } finally {
      await http.close();
      await core.close();
    }
  });
});
