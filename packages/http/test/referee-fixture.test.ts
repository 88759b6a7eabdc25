import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startConformanceFixture } from "@codemux/test-servers";
import type { ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MCP_HEADERS, TOKENS, bearer, lastAnswerOf, serve, textOf, type Served } from "./helpers";

const MODERN = "2026-07-28";

/**
 * The conformance referee's own everything-server (both eras) behind codemux in passthrough mode,
 * left at `protocol: auto`: its 2026 side is what `pnpm conformance` holds codemux to.
 */
let fixture: ChildProcess;
let s: Served;
beforeAll(async () => {
  const started = await startConformanceFixture();
  fixture = started.child;
  s = await serve({ mode: "passthrough" }, { c: { type: "http", url: started.url } });
});
afterAll(async () => {
  await s?.close();
  fixture?.kill();
});

/** One 2026-07-28 request to codemux, as the referee sends it (`_meta` with `capabilities`, the routing headers): its status and JSON-RPC answer. */
async function modern(method: string, params: Record<string, unknown>, capabilities: Record<string, unknown> = {}) {
  const _meta = { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": capabilities };
  const name: Record<string, string> = typeof params.name === "string" ? { "mcp-name": params.name } : {};
  const response = await fetch(`${s.url}/mcp`, {
    method: "POST",
    headers: { ...MCP_HEADERS, ...bearer(TOKENS.alice), "mcp-protocol-version": MODERN, "mcp-method": method, ...name },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: { ...params, _meta } }),
  });
  return { status: response.status, answer: lastAnswerOf(await response.text()) as { result?: Record<string, unknown>; error?: Record<string, unknown> } };
}

describe("the referee's 2026 fixture behind codemux, unpinned", () => {
  it("is spoken to in 2026-07-28, and its results without resultType are complete ones", async () => {
    expect(s.core.pool.status().find((status) => status.name === "c")).toMatchObject({ protocol: MODERN });
    const { status, answer } = await modern("tools/call", { name: "c__test_image_content", arguments: {} });
    expect(status).toBe(200);
    expect(answer.result).toMatchObject({ resultType: "complete", content: [{ type: "image", mimeType: "image/png" }] });
  });

  it("refuses a 2026 client's call that needs a capability it did not declare with -32021 and HTTP 400, naming the capability", async () => {
    const { status, answer } = await modern("tools/call", { name: "c__test_missing_capability", arguments: {} });
    expect(status).toBe(400);
    expect(answer.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { sampling: {} } } });
  });

  it("gives a 2025 client the same refusal as an error result of its call", async () => {
    const client = new Client({ name: "legacy", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: bearer(TOKENS.alice) } }));
    try {
      // A 2025 client is spoken to in 2025 by the fixture's own SDK side, which has no such tool: the error comes back as a result.
      const result = await client.callTool({ name: "c__test_missing_capability", arguments: {} });
      expect(result.isError).toBe(true);
    } finally {
      await client.close();
    }
  });

  it("forwards a retry that carries inputResponses without requestState (a server may hand out none), rather than asking again", async () => {
    const inputResponses = { user_name: { action: "accept", content: { name: "Alice" } } };
    const { answer } = await modern("tools/call", { name: "c__test_input_required_result_elicitation", arguments: {}, inputResponses }, { elicitation: {} });
    expect(answer.result?.resultType).toBe("complete");
    expect(textOf(answer.result)).toContain("Alice");
    const prompt = await modern(
      "prompts/get",
      { name: "c__test_input_required_result_prompt", inputResponses: { user_context: { action: "accept", content: { context: "ctx" } } } },
      { elicitation: {} },
    );
    expect(prompt.answer.result).toMatchObject({ resultType: "complete", messages: expect.any(Array) });
  });
});
