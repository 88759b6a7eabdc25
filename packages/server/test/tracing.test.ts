import { redactSecrets, type SessionInfo } from "@codemux/core";
import { SpanKind, trace } from "@opentelemetry/api";
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { askingServerPath, until } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { ElicitRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Codemux, createSessionServer, policiesOf } from "../src/index";
import { config, misbehaving, node, servicesOf, textOf } from "./helpers";

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
let dir: string;
let core: Codemux;
const ops: SessionInfo = { id: "ops-session", principal: "oauth:https://idp.example#7", groups: ["ops"] };

beforeAll(async () => {
  provider.register();
  dir = await mkdtemp(join(tmpdir(), "codemux-tracing-"));
  const policies = policiesOf({ policies: { rules: [{ name: "ops", groups: ["ops"], tools: ["m__*"], callsPerMinute: 100 }] } }, "codemux.json");
  core = new Codemux({ config: config({ m: misbehaving() }), dataDir: dir, ...(policies ? { policies } : {}) });
  core.start();
  await core.ready(5_000);
});
afterAll(async () => {
  await core.close();
  await provider.shutdown();
  trace.disable();
  await rm(dir, { recursive: true, force: true });
});

const named = (spans: ReadableSpan[], name: string) => spans.filter((span) => span.name === name);
const parentOf = (span: ReadableSpan | undefined) => span?.parentSpanContext?.spanId;

describe("pipeline spans", () => {
  it("a call under a policy has its policy stage (the calls-per-minute count) as a span beside the downstream call", async () => {
    exporter.reset();
    await core.surface("code").callTool("call_tool", { name: "m__echo", args: { text: "x" } }, { session: ops, origin: "cli" });
    const spans = exporter.getFinishedSpans();
    const [pipeline] = named(spans, "pipeline m__echo");
    const [policy] = named(spans, "policy");
    const [downstream] = named(spans, "tools/call echo");
    expect(pipeline?.attributes).toMatchObject({ "gen_ai.tool.name": "m__echo", "codemux.origin": "cli", "enduser.id": redactSecrets(ops.principal) });
    expect(policy?.attributes).toMatchObject({ "codemux.policy.rule": "ops" });
    expect(parentOf(policy)).toBe(pipeline?.spanContext().spanId);
    expect(parentOf(downstream)).toBe(pipeline?.spanContext().spanId);
    // A 2025 server over stdio (the call lane): the context goes in `_meta` all the same; no argument value is recorded.
    expect(downstream?.attributes).toMatchObject({ "codemux.server": "m", "network.transport": "pipe", "codemux.era": "legacy" });
    expect(JSON.stringify(spans.map((span) => span.attributes))).not.toContain('"x"');
  });
});

describe("spans of requests beyond tools, and of the relay", () => {
  let other: Codemux;
  beforeAll(async () => {
    const file = join(dir, "listing.json");
    await writeFile(
      file,
      JSON.stringify({
        resources: [{ uri: "file:///notes.txt?token=s3cr3t", name: "notes" }],
        prompts: [{ name: "summarize", arguments: [{ name: "text" }] }],
      }),
    );
    const listingServer = fileURLToPath(new URL("./fixtures/listing-server.mjs", import.meta.url));
    other = new Codemux({ config: config({ l: node(listingServer, file), s: node(askingServerPath) }), dataDir: dir });
    other.start();
    await other.ready(10_000);
  });
  afterAll(async () => {
    await other.close();
  });

  const traceparentOf = (span: ReadableSpan | undefined) => `00-${span?.spanContext().traceId}-${span?.spanContext().spanId}-01`;

  it("a resources/read and a prompts/get are CLIENT spans whose context reaches the server in the request's _meta, with no argument value", async () => {
    exporter.reset();
    const session = other.session();
    const read = await servicesOf(other).features.readResource("file:///notes.txt?token=s3cr3t", { session, origin: "resources/read" });
    const [readSpan] = exporter.getFinishedSpans().filter((span) => span.attributes["mcp.method.name"] === "resources/read");
    expect(readSpan?.kind).toBe(SpanKind.CLIENT);
    expect(readSpan?.name).toBe("resources/read file:///notes.txt?token=***");
    expect(readSpan?.attributes).toMatchObject({ "codemux.server": "l", "mcp.resource.uri": "file:///notes.txt?token=***" });
    expect(read.contents.map((c) => ("text" in c ? c.text : ""))).toContain(traceparentOf(readSpan));

    exporter.reset();
    const prompt = await servicesOf(other).features.getPrompt({ name: "l__summarize", arguments: { text: "private words" } }, { session });
    const [promptSpan] = named(exporter.getFinishedSpans(), "prompts/get summarize");
    expect(promptSpan?.kind).toBe(SpanKind.CLIENT);
    expect(promptSpan?.attributes).toMatchObject({ "mcp.method.name": "prompts/get", "gen_ai.prompt.name": "summarize", "codemux.server": "l" });
    expect(JSON.stringify(prompt.messages)).toContain(traceparentOf(promptSpan));
    expect(JSON.stringify(exporter.getFinishedSpans().map((span) => span.attributes))).not.toContain("private words");
  });

  it("a server's question is a relay span under the call that it came during; once it has asked, a call waits for its turn in a span", async () => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await createSessionServer(other.sessions).connect(serverSide);
    const client = new Client({ name: "asked", version: "1.0.0" }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { answer: "yes" } }));
    await client.connect(clientSide);
    const ask = () => client.callTool({ name: "call_tool", arguments: { name: "s__ask", args: { message: "sure?" } } }) as Promise<CallToolResult>;
    try {
      exporter.reset();
      expect(JSON.parse(textOf(await ask()))).toMatchObject({ action: "accept" });
      await until(() => named(exporter.getFinishedSpans(), "pipeline s__ask").length === 1);
      const [pipeline] = named(exporter.getFinishedSpans(), "pipeline s__ask");
      const [relay] = named(exporter.getFinishedSpans(), "relay elicitation/create");
      expect(relay?.attributes).toMatchObject({ "codemux.server": "s", "mcp.method.name": "elicitation/create" });
      expect(parentOf(relay)).toBe(pipeline?.spanContext().spanId);
      expect(relay?.spanContext().traceId).toBe(pipeline?.spanContext().traceId);

      exporter.reset();
      expect(JSON.parse(textOf(await ask()))).toMatchObject({ action: "accept" });
      await until(() => named(exporter.getFinishedSpans(), "pipeline s__ask").length === 1);
      const [second] = named(exporter.getFinishedSpans(), "pipeline s__ask");
      const [turn] = named(exporter.getFinishedSpans(), "wait for turn");
      expect(turn?.attributes).toMatchObject({ "codemux.server": "s" });
      expect(parentOf(turn)).toBe(second?.spanContext().spanId);
    } finally {
      await client.close();
    }
  });
});
