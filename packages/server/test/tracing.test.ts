import { redactSecrets, type SessionInfo } from "@codemux/core";
import { trace } from "@opentelemetry/api";
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Codemux, policiesOf } from "../src/index";
import { config, misbehaving } from "./helpers";

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
