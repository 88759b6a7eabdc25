import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { CODE_META_TOOLS } from "@codemux/server";
import { PluginRefusedError } from "@codemux/hooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOKENS, bearer, json, serve, type Served } from "./helpers";

const auth = bearer(TOKENS.alice);
const post = (body: unknown) => ({ method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify(body) });

describe("REST gateway (the README's curl examples, with fetch)", () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve({ compatRoutes: true });
  });
  afterAll(async () => {
    await s?.close();
  });

  it("lists tools compactly without q, and searches with q", async () => {
    const list = await json(await fetch(`${s.url}/v1/tools`, { headers: auth }));
    expect(list.total).toBeGreaterThan(5);
    expect((list.tools as Array<Record<string, unknown>>)[0]).toEqual({ name: expect.stringMatching(/^m__/), signature: expect.any(String) });
    const found = await json(await fetch(`${s.url}/v1/tools?q=echo%20text&limit=3`, { headers: auth }));
    const first = (found.tools as Array<Record<string, unknown>>)[0];
    expect(first).toMatchObject({ name: "m__echo", module: "mcp/servers/m/echo", signature: expect.stringContaining("echo(") });
    expect((found.tools as unknown[]).length).toBeLessThanOrEqual(3);
    const bad = await fetch(`${s.url}/v1/tools?q=x&limit=500`, { headers: auth });
    expect(bad.status).toBe(400);
    expect((await json(bad)).error).toMatchObject({ code: "bad_request" });
    expect((await fetch(`${s.url}/v1/tools?q=echo&server=nope`, { headers: auth })).status).toBe(404);
  });

  it("the search answers the same tools, in the same order, as search_tools over MCP", async () => {
    const client = new Client({ name: "t", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: auth } }));
    const mcp = ((await client.callTool({ name: "search_tools", arguments: { query: "wait slowly", limit: 4 } })) as CallToolResult).content[0];
    const rest = await json(await fetch(`${s.url}/v1/tools?q=wait%20slowly&limit=4`, { headers: auth }));
    const names = (rest.tools as Array<{ name: string }>).map((t) => t.name);
    const mcpNames = (mcp?.type === "text" ? mcp.text : "")
      .split("\n")
      .filter((l) => !l.startsWith(" "))
      .map((l) => l.split(" ")[0]);
    expect(names).toEqual(mcpNames);
    await client.close();
  });

  it("describes a tool with its schema and TypeScript module", async () => {
    const tool = await json(await fetch(`${s.url}/v1/tools/m__echo`, { headers: auth }));
    expect(tool).toMatchObject({ name: "m__echo", server: "m", tool: "echo", module: "mcp/servers/m/echo", inputSchema: { required: ["text"] } });
    expect(tool.typescript).toContain("export");
    const ts = await fetch(`${s.url}/v1/tools/m__echo?format=ts`, { headers: auth });
    expect(ts.headers.get("content-type")).toContain("text/plain");
    expect(await ts.text()).toBe(tool.typescript);
    const missing = await fetch(`${s.url}/v1/tools/m__ecko`, { headers: auth });
    expect(missing.status).toBe(404);
    const error = (await json(missing)).error as { message: string };
    expect(error).toMatchObject({ code: "unknown_tool", suggestions: ["m__echo"] });
    // REST's own way to find tools, not a meta-tool's.
    expect(error.message).toMatch(/; GET \/v1\/tools\?q=\.\.\. finds them\.$/);
  });

  it("calls a tool with its native arguments: the value, a 422 for a tool error, a 400 for bad arguments", async () => {
    expect(await json(await fetch(`${s.url}/v1/tools/m__echo/call`, post({ text: "hi" })))).toEqual({ tool: "m__echo", value: "hi" });
    expect(await json(await fetch(`${s.url}/v1/tools/m__structured/call`, post({ n: 2 })))).toEqual({ tool: "m__structured", value: { n: 2, doubled: 4 } });
    const failed = await fetch(`${s.url}/v1/tools/m__fail/call`, post({ message: "boom" }));
    expect(failed.status).toBe(422);
    expect((await json(failed)).error).toEqual({ code: "tool_error", message: "boom" });
    const invalid = await fetch(`${s.url}/v1/tools/m__echo/call`, post({ text: 5 }));
    expect(invalid.status).toBe(400);
    expect((await json(invalid)).error).toMatchObject({ code: "invalid_arguments" });
    expect((await fetch(`${s.url}/v1/tools/m__echo/call`, post([1, 2]))).status).toBe(400);
    const threw = await fetch(`${s.url}/v1/tools/m__throw/call`, post({ message: "rpc" }));
    expect([422, 502]).toContain(threw.status);
  });

  it("runs code, and answers a snippet error with 422 and its line", async () => {
    const ok = await json(
      await fetch(`${s.url}/v1/exec`, post({ code: 'import { echo } from "mcp/servers/m/echo";\nexport default await echo({ text: "x" });' })),
    );
    expect(ok).toMatchObject({ result: "x", toolCalls: 1 });
    const broken = await fetch(`${s.url}/v1/exec`, post({ code: "const a = 1;\nthrow new Error('nope');" }));
    expect(broken.status).toBe(422);
    expect((await json(broken)).error).toMatchObject({ code: "exec_error", message: expect.stringContaining("nope"), line: 2 });
    expect((await fetch(`${s.url}/v1/exec`, post({}))).status).toBe(400);
  });

  it("spills a large result to a handle and pages it with the read_result ops", async () => {
    const answer = await json(await fetch(`${s.url}/v1/tools/m__huge/call`, post({ bytes: 100_000, lines: true })));
    expect(answer.spilled).toMatchObject({ autoSpilled: true, estimatedTokens: expect.any(Number), preview: expect.stringMatching(/^line 1: x+/) });
    const handle = (answer.spilled as { handle: string }).handle;
    const stat = await json(await fetch(`${s.url}/v1/results/${handle}`, { headers: auth }));
    expect(stat).toMatchObject({ handle, tool: "m__huge", lines: expect.any(Number) });
    const grep = await json(await fetch(`${s.url}/v1/results/${handle}?op=grep&pattern=line%20777:`, { headers: auth }));
    expect(grep.text).toContain("777: line 777:");
    expect((await fetch(`${s.url}/v1/results/res_000000000000`, { headers: auth })).status).toBe(404);
    expect((await fetch(`${s.url}/v1/results/${handle}?op=explode`, { headers: auth })).status).toBe(400);
  });

  it("serves an OpenAPI 3.1 document built from the meta-tools' schemas", async () => {
    const doc = await json(await fetch(`${s.url}/v1/openapi.json`, { headers: auth }));
    expect(doc.openapi).toBe("3.1.0");
    const paths = doc.paths as Record<
      string,
      Record<string, { parameters?: Array<{ name: string }>; requestBody?: { content: Record<string, { schema: { properties: Record<string, unknown> } }> } }>
    >;
    expect(Object.keys(paths)).toEqual(expect.arrayContaining(["/v1/tools", "/v1/tools/{name}", "/v1/tools/{name}/call", "/v1/exec", "/v1/results/{handle}"]));
    expect(paths["/v1/results/{handle}"]?.get?.parameters?.map((p) => p.name)).toEqual(expect.arrayContaining(["op", "pattern", "lines"]));
    expect(Object.keys(paths["/v1/exec"]?.post?.requestBody?.content["application/json"]?.schema.properties ?? {})).toEqual(
      Object.keys(CODE_META_TOOLS.find((t) => t.definition.name === "execute_code")?.definition.inputSchema.properties ?? {}),
    );
  });

  it("serves seed 002's routes behind --compat-routes", async () => {
    const retrieved = await json(await fetch(`${s.url}/retrieve_tools`, post({ query: "echo text" })));
    expect((retrieved.tools as Array<{ name: string }>)[0]?.name).toBe("m__echo");
    const described = await json(await fetch(`${s.url}/describe_tools`, post({ names: ["m__echo"] })));
    expect((described.tools as Array<Record<string, unknown>>)[0]).toMatchObject({ name: "m__echo", inputSchema: { required: ["text"] } });
    expect(await json(await fetch(`${s.url}/call`, post({ method: "call_tool_read", name: "m__echo", args: { text: "c" } })))).toMatchObject({ value: "c" });
    expect(await json(await fetch(`${s.url}/call/m__echo`, post({ args: { text: "d" } })))).toMatchObject({ value: "d" });
    expect(await json(await fetch(`${s.url}/exec`, post({ code: "export default 2" })))).toMatchObject({ result: 2 });
    const tools = await json(await fetch(`${s.url}/tools?q=echo`, { headers: auth }));
    expect((tools.tools as Array<Record<string, unknown>>)[0]).toMatchObject({ name: "m__echo", params: "text: string*" });
    expect(tools.hint).toBe("GET /tools/{name} for full inputSchema");
    expect(await json(await fetch(`${s.url}/tools/m__echo`, { headers: auth }))).toMatchObject({ name: "m__echo" });
    expect((await fetch(`${s.url}/restart`, { method: "POST", headers: auth })).status).toBe(501);
    expect(await json(await fetch(`${s.url}/health`))).toMatchObject({ status: "ok" });
  });
});

describe("principals", () => {
  it("call-pipeline middleware sees token:<name> as the principal, over MCP and REST alike", async () => {
    const s = await serve();
    const seen: string[] = [];
    s.core.pipeline.use(async (ctx, next) => {
      seen.push(`${ctx.session.principal}:${ctx.origin}`);
      return next(ctx);
    });
    try {
      const client = new Client({ name: "t", version: "1" });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: bearer(TOKENS.bob) } }));
      await client.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: "x" } } });
      await client.close();
      await fetch(`${s.url}/v1/tools/m__echo/call`, post({ text: "y" }));
      expect(seen).toEqual(["token:bob:call_tool", "token:alice:rest"]);
    } finally {
      await s.close();
    }
  });
});

describe("a plugin's refusal over REST", () => {
  it("is a 403 that says why (a quarantined tool), not a 500", async () => {
    const s = await serve();
    s.core.pipeline.use(async () => {
      throw new PluginRefusedError("pin", "m__echo changed since it was approved; codemux approve m__echo lets it through.", { code: "QUARANTINED" });
    });
    try {
      const answer = await fetch(`${s.url}/v1/tools/m__echo/call`, post({ text: "y" }));
      expect(answer.status).toBe(403);
      expect((await json(answer)).error).toMatchObject({
        code: "forbidden",
        message: expect.stringContaining("changed since it was approved"),
        reason: "quarantined",
        plugin: "pin",
      });
      expect(s.logs.filter((l) => l.msg === "internal error")).toEqual([]);
    } finally {
      await s.close();
    }
  });
});

describe("operations", () => {
  it("healthz needs no token; readyz answers its status without one and its detail with one; metrics need one and count calls per server", async () => {
    const s = await serve();
    try {
      expect(await json(await fetch(`${s.url}/healthz`))).toMatchObject({ status: "ok", sessions: 0 });
      expect(await json(await fetch(`${s.url}/readyz`))).toEqual({ status: "ready" });
      const ready = await json(await fetch(`${s.url}/readyz`, { headers: auth }));
      expect(ready).toMatchObject({ status: "ready", servers: [{ name: "m", state: "ready" }] });
      await fetch(`${s.url}/v1/tools/m__echo/call`, post({ text: "m" }));
      await fetch(`${s.url}/v1/tools/m__fail/call`, post({}));
      expect((await fetch(`${s.url}/metrics`)).status).toBe(401);
      const text = await (await fetch(`${s.url}/metrics`, { headers: auth })).text();
      expect(text).toContain('codemux_tool_calls_total{origin="rest",server="m"} 2');
      expect(text).toContain('codemux_tool_errors_total{origin="rest",server="m"} 1');
      expect(text).toMatch(/codemux_tool_call_duration_seconds_count\{server="m"\} 2/);
      expect(text).toContain('codemux_sessions{transport="streamable"} 0');
      expect(text).toMatch(/codemux_http_requests_total\{route="rest",status="200"\} \d+/);
      // A plugin's own metric and log field.
      s.http.metrics.counter("myplugin_hits_total", "Hits of my plugin.").inc({ kind: "a" });
      s.http.addLogFields(() => ({ tenant: "acme" }));
      expect(await (await fetch(`${s.url}/metrics`, { headers: auth })).text()).toContain('myplugin_hits_total{kind="a"} 1');
      expect(s.logs.at(-1)).toMatchObject({ msg: "request", tenant: "acme", requestId: expect.any(String), principal: "token:alice" });
      const tagged = await fetch(`${s.url}/healthz`, { headers: { "x-request-id": "trace-42" } });
      expect(tagged.headers.get("x-request-id")).toBe("trace-42");
    } finally {
      await s.close();
    }
  });

  it("shutdown lets a call in flight finish, then refuses new work", async () => {
    const s = await serve();
    const slow = fetch(`${s.url}/v1/tools/m__slow/call`, post({ ms: 400, steps: 2 }));
    while (!s.http.metrics.render().includes("codemux_http_requests_in_flight 1")) await new Promise((r) => setTimeout(r, 10));
    const closing = s.http.close();
    const answer = await slow;
    expect(answer.status).toBe(200);
    expect(await json(answer)).toMatchObject({ value: "slept 400 ms" });
    await closing;
    await expect(fetch(`${s.url}/healthz`)).rejects.toThrow();
    await s.core.close();
  });
});
