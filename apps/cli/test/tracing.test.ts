import { haveProgram, misbehavingEntry, modernServerPath, startOverHttp, startRedisServer, until, type RedisServer } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveCli } from "./serve-cli";

const TOKEN = "laptop:tracing-test-token-0123456789";

/** One span as an OTLP/HTTP JSON export carries it, its attributes flattened. */
interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
}

const INTERNAL = 1;
const SERVER = 2;
const CLIENT = 3;
const CONSUMER = 5;

/** An OTLP/HTTP trace receiver in the test process: every span of every JSON export posted to /v1/traces. */
async function otlpReceiver(): Promise<{ server: Server; url: string; spans: ExportedSpan[] }> {
  const spans: ExportedSpan[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.url === "/v1/traces" && String(req.headers["content-type"]).includes("json")) {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { resourceSpans: { scopeSpans: { spans: Record<string, unknown>[] }[] }[] };
      for (const resource of body.resourceSpans)
        for (const scope of resource.scopeSpans)
          for (const span of scope.spans)
            spans.push({
              traceId: span.traceId as string,
              spanId: span.spanId as string,
              parentSpanId: (span.parentSpanId as string | undefined) ?? "",
              name: span.name as string,
              kind: span.kind as number,
              attributes: Object.fromEntries(
                ((span.attributes ?? []) as { key: string; value: Record<string, unknown> }[]).map(({ key, value }) => [key, Object.values(value)[0]]),
              ),
              links: ((span.links ?? []) as { traceId: string; spanId: string }[]).map(({ traceId, spanId }) => ({ traceId, spanId })),
            });
    }
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans };
}

let dir: string;
let receiver: Awaited<ReturnType<typeof otlpReceiver>>;
let downstreamLog: string;
let codemux: { url: string; stderr: () => string };
const started: ChildProcess[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "codemux-tracing-"));
  receiver = await otlpReceiver();
  downstreamLog = join(dir, "b.log");
  // One downstream server over stdio (`_meta` only), one over Streamable HTTP (`_meta` and the header).
  const b = await startOverHttp(modernServerPath, ["--name", "b", "--log", downstreamLog]);
  started.push(b.child);
  const config = join(dir, "codemux.json");
  await writeFile(
    config,
    JSON.stringify({
      mcpServers: {
        a: { command: process.execPath, args: [modernServerPath, "--name", "a"] },
        b: { type: "http", url: `${b.url}/mcp` },
        // The same server held to the 2025 era: `_meta` carries the context there too.
        c: { command: process.execPath, args: [modernServerPath, "--name", "c"], protocol: "2025-11-25" },
      },
    }),
  );
  const env = {
    PATH: process.env.PATH ?? "",
    HOME: dir,
    CODEMUX_HOME: join(dir, ".codemux"),
    CODEMUX_TOKEN: TOKEN,
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_BSP_SCHEDULE_DELAY: "50",
  };
  codemux = await serveCli(["serve", "--http", ":0", "--config", config], { cwd: dir, env, started });
});

afterAll(async () => {
  for (const child of started) if (child.exitCode === null) child.kill("SIGKILL");
  receiver?.server.close();
});

/** A client that sends its own trace context on every HTTP request, as an instrumented client does. */
async function tracedClient(traceparent: string): Promise<Client> {
  const client = new Client({ name: "tracing-test", version: "1.0.0" });
  const headers = { authorization: `Bearer ${TOKEN.split(":")[1]}`, traceparent };
  await client.connect(new StreamableHTTPClientTransport(new URL(`${codemux.url}/mcp`), { requestInit: { headers } }));
  return client;
}

const hex = (length: number) => Array.from({ length }, () => Math.floor(Math.random() * 16).toString(16)).join("");
const textOf = (r: unknown) => ((r as CallToolResult).content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("\n");

/** The spans of one trace, once one named `last` has arrived (the export is batched). */
async function traceOf(traceId: string, done: (spans: ExportedSpan[]) => boolean): Promise<ExportedSpan[]> {
  const spans = () => receiver.spans.filter((span) => span.traceId === traceId);
  await until(() => done(spans()));
  return spans();
}

const childrenOf = (spans: ExportedSpan[], parent: ExportedSpan) => spans.filter((span) => span.parentSpanId === parent.spanId);
const one = (spans: ExportedSpan[], name: string) => {
  const found = spans.filter((span) => span.name === name);
  expect(found.map((span) => span.name)).toEqual([name]);
  return found[0] as ExportedSpan;
};

describe("traces over OTLP/HTTP", () => {
  it("a call_tool is one trace continuing the client's traceparent, down to the downstream server, which gets the context in _meta", async () => {
    const traceId = hex(32);
    const clientSpan = hex(16);
    const client = await tracedClient(`00-${traceId}-${clientSpan}-01`);
    try {
      const result = await client.callTool({ name: "call_tool", arguments: { name: "a__whoami", args: {} } });
      const seen = JSON.parse(textOf(result)) as { traceparent: string | null };
      const spans = await traceOf(
        traceId,
        (all) => all.some((span) => span.name === "tools/call whoami") && all.some((span) => span.kind === SERVER && span.name.startsWith("POST")),
      );
      const inbound = one(spans, "tools/call call_tool");
      expect(inbound.kind).toBe(SERVER);
      // Under the HTTP request's span, itself the child of the client's span.
      const http = spans.find((span) => span.spanId === inbound.parentSpanId) as ExportedSpan;
      expect([http.name, http.kind, http.parentSpanId]).toEqual(["POST mcp", SERVER, clientSpan]);
      expect(http.attributes).toMatchObject({
        "http.request.method": "POST",
        "http.route": "/mcp",
        "http.response.status_code": 200,
        "enduser.id": "token:laptop",
      });
      expect(inbound.attributes).toMatchObject({
        "mcp.method.name": "tools/call",
        "gen_ai.tool.name": "call_tool",
        "gen_ai.operation.name": "execute_tool",
        "codemux.surface": "code",
        "codemux.era": "legacy",
        "codemux.outcome": "ok",
        "enduser.id": "token:laptop",
      });
      const pipeline = one(childrenOf(spans, inbound), "pipeline a__whoami");
      expect(pipeline.kind).toBe(INTERNAL);
      expect(pipeline.attributes).toMatchObject({ "gen_ai.tool.name": "a__whoami", "codemux.origin": "call_tool" });
      const downstream = one(childrenOf(spans, pipeline), "tools/call whoami");
      expect(downstream.kind).toBe(CLIENT);
      expect(downstream.attributes).toMatchObject({
        "mcp.method.name": "tools/call",
        "gen_ai.tool.name": "whoami",
        "codemux.server": "a",
        "network.transport": "pipe",
        "mcp.protocol.version": "2026-07-28",
        "codemux.era": "modern",
        "codemux.retries": 0,
      });
      // The server heard of the call's own span: its trace continues there.
      expect(seen.traceparent).toBe(`00-${traceId}-${downstream.spanId}-01`);
      // No argument or result value is recorded.
      for (const span of spans) expect(Object.keys(span.attributes).filter((key) => key.includes("argument") || key.includes("result"))).toEqual([]);
      // A request's own `_meta` context wins over the HTTP request's headers.
      const metaTrace = hex(32);
      const metaSpan = hex(16);
      await client.callTool({
        name: "call_tool",
        arguments: { name: "a__echo", args: { text: "hi" } },
        _meta: { traceparent: `00-${metaTrace}-${metaSpan}-01` },
      });
      const metaSpans = await traceOf(metaTrace, (all) => all.some((span) => span.name === "tools/call echo"));
      expect(one(metaSpans, "tools/call call_tool").parentSpanId).toBe(metaSpan);

      // A 2025-era server over stdio is told the call's context in `_meta` as well.
      const legacyTrace = hex(32);
      const legacy = await client.callTool({
        name: "call_tool",
        arguments: { name: "c__whoami", args: {} },
        _meta: { traceparent: `00-${legacyTrace}-${hex(16)}-01` },
      });
      const heard = JSON.parse(textOf(legacy)) as { traceparent: string | null };
      const legacySpans = await traceOf(legacyTrace, (all) => all.some((span) => span.name === "tools/call whoami"));
      const legacyCall = one(legacySpans, "tools/call whoami");
      expect(legacyCall.attributes).toMatchObject({ "codemux.server": "c", "codemux.era": "legacy", "network.transport": "pipe" });
      expect(heard.traceparent).toBe(`00-${legacyTrace}-${legacyCall.spanId}-01`);
    } finally {
      await client.close();
    }
  });

  it("an execute_code that calls two tools on two servers is one trace: each call a child of the execute_code span, the HTTP server told in its header", async () => {
    const traceId = hex(32);
    const client = await tracedClient(`00-${traceId}-${hex(16)}-01`);
    try {
      const code = [
        'import { whoami } from "mcp/servers/a/whoami";',
        'import { whoami as whoamiB } from "mcp/servers/b/whoami";',
        "export default [await whoami({}), await whoamiB({})];",
      ].join("\n");
      const result = await client.callTool({ name: "execute_code", arguments: { code } });
      expect((result as CallToolResult).isError).toBeFalsy();
      const spans = await traceOf(
        traceId,
        (all) => all.filter((span) => span.name === "tools/call whoami").length === 2 && all.some((span) => span.name === "tools/call execute_code"),
      );
      const execute = one(spans, "tools/call execute_code");
      const calls = childrenOf(spans, execute).filter((span) => span.name.startsWith("pipeline "));
      expect(calls.map((span) => span.name).sort()).toEqual(["pipeline a__whoami", "pipeline b__whoami"]);
      for (const call of calls) expect(call.attributes["codemux.origin"]).toBe("execute_code");
      const downstream = calls.map((call) => one(childrenOf(spans, call), "tools/call whoami"));
      expect(downstream.map((span) => [span.attributes["codemux.server"], span.attributes["network.transport"]]).sort()).toEqual([
        ["a", "pipe"],
        ["b", "tcp"],
      ]);
      const b = downstream.find((span) => span.attributes["codemux.server"] === "b") as ExportedSpan;
      // The HTTP server got the context as the W3C header too.
      await until(async () => (await readFile(downstreamLog, "utf8")).includes(`traceparent-header 00-${traceId}-${b.spanId}-01`));
    } finally {
      await client.close();
    }
  });

  it("log lines carry the trace and span ids", async () => {
    const traceId = hex(32);
    const client = await tracedClient(`00-${traceId}-${hex(16)}-01`);
    await client.callTool({ name: "call_tool", arguments: { name: "a__echo", args: { text: "x" } } });
    await client.close();
    await until(() => codemux.stderr().includes(`"traceId":"${traceId}"`));
    const line = codemux
      .stderr()
      .split("\n")
      .find((text) => text.includes(`"traceId":"${traceId}"`)) as string;
    expect(JSON.parse(line)).toMatchObject({ msg: "request", traceId, spanId: expect.stringMatching(/^[0-9a-f]{16}$/) });
  });
});

describe.skipIf(!haveProgram("redis-server", "redis-server"))("a job queued across two instances on Redis", () => {
  let redis: RedisServer;
  const urls: Record<string, string> = {};

  beforeAll(async () => {
    redis = await startRedisServer();
    const config = join(dir, "jobs.json");
    await writeFile(config, JSON.stringify({ mcpServers: { m: misbehavingEntry("m") } }));
    for (const id of ["one", "two"]) {
      const env = {
        PATH: process.env.PATH ?? "",
        HOME: dir,
        CODEMUX_HOME: join(dir, `home-${id}`),
        CODEMUX_TOKEN: TOKEN,
        CODEMUX_STORE: redis.url,
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_BSP_SCHEDULE_DELAY: "50",
      };
      urls[id] = (await serveCli(["serve", "--http", "127.0.0.1:0", "--config", config, "--instance-id", id], { cwd: dir, env, started })).url;
    }
  }, 60_000);

  afterAll(async () => {
    for (const child of started) if (child.exitCode === null) child.kill("SIGKILL");
    await redis?.kill();
  });

  it("the instance that takes it runs it in a span linked back to the request that queued it", async () => {
    const traceId = hex(32);
    const client = new Client({ name: "tracing-test", version: "1.0.0" });
    const headers = { authorization: `Bearer ${TOKEN.split(":")[1]}`, traceparent: `00-${traceId}-${hex(16)}-01` };
    await client.connect(new StreamableHTTPClientTransport(new URL(`${urls.one}/mcp`), { requestInit: { headers } }));
    try {
      // Instance one's four job slots (the default) are taken: the next job waits in the shared queue, and two takes it.
      const slow = 'import { slow } from "mcp/servers/m/slow";\nexport default await slow({ ms: 120000, steps: 120 });';
      for (let i = 0; i < 4; i++) await client.callTool({ name: "execute_code", arguments: { code: slow, background: true } });
      const queued = await client.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: "queued" }, background: true } });
      const job = /job_[0-9a-f]{12}/.exec(textOf(queued))?.[0] as string;
      await until(() => receiver.spans.some((span) => span.name === "job call_tool" && span.attributes["codemux.job"] === job));
      const jobSpan = receiver.spans.find((span) => span.name === "job call_tool" && span.attributes["codemux.job"] === job) as ExportedSpan;
      expect(jobSpan.kind).toBe(CONSUMER);
      expect(jobSpan.attributes).toMatchObject({ "codemux.job.shared_queue": true, "codemux.job.status": "completed" });
      // Its own trace, linked to the call that queued it on instance one, in the client's trace.
      expect(jobSpan.traceId).not.toBe(traceId);
      const queuing = receiver.spans.filter((span) => span.traceId === traceId && span.attributes["gen_ai.tool.name"] === "call_tool");
      expect(jobSpan.links).toHaveLength(1);
      expect(queuing.map((span) => span.spanId)).toContain(jobSpan.links[0]?.spanId);
      expect(jobSpan.links[0]?.traceId).toBe(traceId);
      // Its Redis round trips are spans: queued in the request's trace, its record saved, taken by instance two.
      await until(() => receiver.spans.some((span) => span.name === "redis save job" && span.attributes["codemux.job"] === job));
      const queue = receiver.spans.find((span) => span.name === "redis queue job" && span.attributes["codemux.job"] === job) as ExportedSpan;
      expect(queue.kind).toBe(CLIENT);
      expect(queue.traceId).toBe(traceId);
      expect(queue.attributes).toMatchObject({ "db.system.name": "redis", "db.operation.name": "queue job" });
      // The job's calls are its children.
      await until(() => receiver.spans.some((span) => span.parentSpanId === jobSpan.spanId));
      expect(one(childrenOf(receiver.spans, jobSpan), "pipeline m__echo").attributes).toMatchObject({ "codemux.origin": "job", "codemux.job": job });
    } finally {
      await client.close();
    }
  }, 60_000);
});

describe("the config's tracing key", () => {
  it("turns traces on without any OTEL_* variable, to the collector it names", async () => {
    const own = await otlpReceiver();
    try {
      const config = join(dir, "traced.json");
      await writeFile(
        config,
        JSON.stringify({
          mcpServers: { a: { command: process.execPath, args: [modernServerPath, "--name", "a"] } },
          tracing: { enabled: true, endpoint: own.url, serviceName: "codemux-from-config" },
        }),
      );
      const env = { PATH: process.env.PATH ?? "", HOME: dir, CODEMUX_HOME: join(dir, ".codemux-config"), CODEMUX_TOKEN: TOKEN, OTEL_BSP_SCHEDULE_DELAY: "50" };
      const served = await serveCli(["serve", "--http", ":0", "--config", config], { cwd: dir, env, started });
      const traceId = hex(32);
      const client = new Client({ name: "tracing-test", version: "1.0.0" });
      const headers = { authorization: `Bearer ${TOKEN.split(":")[1]}`, traceparent: `00-${traceId}-${hex(16)}-01` };
      await client.connect(new StreamableHTTPClientTransport(new URL(`${served.url}/mcp`), { requestInit: { headers } }));
      await client.callTool({ name: "call_tool", arguments: { name: "a__echo", args: { text: "x" } } });
      await client.close();
      await until(() => own.spans.some((span) => span.traceId === traceId && span.name === "tools/call echo"));
      expect(own.spans.find((span) => span.traceId === traceId && span.name === "tools/call echo")?.kind).toBe(CLIENT);
    } finally {
      own.server.close();
    }
  });
});
