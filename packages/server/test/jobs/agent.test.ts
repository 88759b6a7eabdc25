import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { type CallToolResult, CreateMessageRequestSchema, type CreateMessageRequest } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { connect, textOf, type Harness } from "./harness";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

type Params = CreateMessageRequest["params"];
type Reply = { content: unknown; stopReason?: string };

/** A client whose model is a script: each sampling request gets the next scripted reply, computed from the request. */
function scriptedClient(sampling: Record<string, unknown>, script: Array<(params: Params) => Reply>, seen: Params[]): Client {
  const client = new Client({ name: "scripted-model", version: "1.0.0" }, { capabilities: { sampling } });
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    seen.push(request.params);
    const step = script[seen.length - 1];
    if (!step) throw new Error("the script has no more replies");
    const reply = step(request.params);
    return { role: "assistant", model: "script", stopReason: reply.stopReason ?? "endTurn", content: reply.content } as never;
  });
  return client;
}

function lastText(params: Params): string {
  const last = params.messages[params.messages.length - 1];
  const blocks = Array.isArray(last?.content) ? last.content : [last?.content];
  return JSON.stringify(blocks);
}

describe("agent: a sub-agent on the client's model through sampling", () => {
  it("with sampling tools: runs the model's tool uses through codemux and reports counts and tokens", async () => {
    const seen: Params[] = [];
    const client = scriptedClient(
      { tools: {} },
      [
        () => ({ stopReason: "toolUse", content: [{ type: "tool_use", id: "u1", name: "search_tools", input: { query: "echo text" } }] }),
        () => ({
          stopReason: "toolUse",
          content: [{ type: "tool_use", id: "u2", name: "call_tool", input: { name: "bad__echo", args: { text: "hello from the agent" } } }],
        }),
        (params) => ({
          content: [{ type: "text", text: lastText(params).includes("hello from the agent") ? "The echo answered: hello from the agent" : "no echo seen" }],
        }),
      ],
      seen,
    );
    h = await connect({ client });
    const result = await h.call("agent", { prompt: "Echo a greeting through the bad server." });
    expect(textOf(result)).toContain("The echo answered: hello from the agent");
    expect(textOf(result)).toMatch(/2 tool uses, 3 turn\(s\)/);
    const report = result.structuredContent as { totalToolUseCount: number; totalTokens: number; agentId: string; usage: { estimated: boolean } };
    expect(report.totalToolUseCount).toBe(2);
    expect(report.totalTokens).toBeGreaterThan(0);
    expect(report.usage.estimated).toBe(true);
    // The tools went with the request; the agent's own tools only.
    expect(seen[0]?.tools?.map((t) => t.name).sort()).toEqual(["call_tool", "execute_code", "read_module", "read_result", "search_tools"]);
    // The second request carried the first tool's answer back.
    expect(lastText(seen[1]!)).toContain("tool_result");
    // The transcript has the agent's tool uses and the downstream call.
    const transcript = textOf((await h.call("jobs", { action: "output", ids: [report.agentId], transcript: true })) as CallToolResult);
    expect(transcript).toMatch(/search_tools args:/);
    expect(transcript).toMatch(/bad__echo args:/);
  });

  it("acts with its caller's claims: a tool the caller's group may use works for the agent too", async () => {
    const seen: Params[] = [];
    const client = scriptedClient(
      { tools: {} },
      [
        () => ({
          stopReason: "toolUse",
          content: [{ type: "tool_use", id: "u1", name: "call_tool", input: { name: "bad__echo", args: { text: "hello from the team" } } }],
        }),
        (params) => ({ content: [{ type: "text", text: lastText(params).includes("hello from the team") ? "echoed" : "no echo seen" }] }),
      ],
      seen,
    );
    h = await connect({
      client,
      policies: {
        default: "deny",
        rules: [{ name: "team", principals: [], groups: ["team"], scopes: [], tools: ["bad__echo"], exclude: [], readOnly: false }],
      },
      session: { id: "team-session", principal: "token:member", groups: ["team"] },
    });
    expect(textOf(await h.call("agent", { prompt: "Echo through the bad server." }))).toContain("echoed");
  });

  it("resume continues from the previous agent's transcript", async () => {
    const seen: Params[] = [];
    const client = scriptedClient(
      { tools: {} },
      [
        () => ({ content: [{ type: "text", text: "first answer" }] }),
        (params) => ({ content: [{ type: "text", text: `I remember ${params.messages.length} messages` }] }),
      ],
      seen,
    );
    h = await connect({ client });
    const first = await h.call("agent", { prompt: "remember the word pineapple" });
    const id = (first.structuredContent as { agentId: string }).agentId;
    const second = await h.call("agent", { prompt: "what was the word?", resume: id });
    expect(textOf(second)).toContain("I remember 3 messages");
    expect(JSON.stringify(seen[1]?.messages[0])).toContain("pineapple");
  });

  it("without sampling tools: the text protocol's tool blocks are run and answered", async () => {
    const seen: Params[] = [];
    const client = scriptedClient(
      {},
      [
        () => ({
          content: {
            type: "text",
            text: 'Let me call it.\n```tool\n{"name": "call_tool", "arguments": {"name": "bad__echo", "args": {"text": "via text"}}}\n```',
          },
        }),
        (params) => ({ content: { type: "text", text: lastText(params).includes("via text") ? "done: via text" : "missing" } }),
      ],
      seen,
    );
    h = await connect({ client });
    const result = await h.call("agent", { prompt: "echo via text" });
    expect(textOf(result)).toContain("done: via text");
    expect(seen[0]?.tools).toBeUndefined();
    expect(seen[0]?.systemPrompt).toContain("```tool");
  });

  it("in the background: answers at once with a job id, and jobs output collects the report", async () => {
    const seen: Params[] = [];
    h = await connect({ client: scriptedClient({ tools: {} }, [() => ({ content: [{ type: "text", text: "background report" }] })], seen) });
    const started = await h.call("agent", { prompt: "report", background: true });
    const id = (started.structuredContent as { agentId: string; status: string }).agentId;
    expect((started.structuredContent as { status: string }).status).toBe("async_launched");
    expect(textOf(await h.call("jobs", { action: "output", ids: [id] }))).toContain("background report");
  });

  it("is listed only to a client that declared sampling, and unknown to one that did not", async () => {
    h = await connect();
    expect((await h.client.listTools()).tools.map((t) => t.name)).not.toContain("agent");
    const sampling = await h.other("local", scriptedClient({}, [], []));
    expect((await sampling.listTools()).tools.map((t) => t.name)).toContain("agent");
    // Not offered to this client, it is unknown to it, as in the 2026 era: the error names what the client has.
    const refused = await h.client.callTool({ name: "agent", arguments: { prompt: "anything" } }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: -32602, message: expect.stringMatching(/Unknown tool "agent": this client is offered search_tools, /) });
    expect((refused as Error).message.split("offered")[1]).not.toContain("agent");
  });
});
