import { modernServerPath } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ElicitRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { connect, jobId, textOf, type Harness } from "./harness";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** A 2025-era client that answers every question with `answer` once both clients were asked, recording what it was asked. */
function answering(answer: string, asked: string[], ready: () => Promise<void>): Client {
  const client = new Client({ name: "asked", version: "1.0.0" }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params.message);
    await ready();
    return { action: "accept", content: { answer } };
  });
  return client;
}

describe("a 2026 server's questions during background jobs", () => {
  it("reach only the client whose job asked, with two principals' jobs in flight at once on one server", async () => {
    let arrived = 0;
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    const ready = () => {
      if (++arrived === 2) open();
      return opened;
    };
    const askedA: string[] = [];
    const askedB: string[] = [];
    h = await connect({
      servers: { m: { command: process.execPath, args: [modernServerPath, "--legacy", "reject"] } },
      client: answering("A's", askedA, ready),
    });
    const b = await h.other("token:b", answering("B's", askedB, ready));
    const idA = jobId(await h.text("call_tool", { name: "m__ask", args: { message: "job of A" }, background: true }));
    const idB = jobId(
      textOf((await b.callTool({ name: "call_tool", arguments: { name: "m__ask", args: { message: "job of B" }, background: true } })) as CallToolResult),
    );
    const outA = textOf(await h.call("jobs", { action: "output", ids: [idA] }));
    const outB = textOf((await b.callTool({ name: "jobs", arguments: { action: "output", ids: [idB] } })) as CallToolResult);
    expect(outA).toContain(JSON.stringify({ asked: "job of A", answer: { action: "accept", content: { answer: "A's" } } }));
    expect(outB).toContain(JSON.stringify({ asked: "job of B", answer: { action: "accept", content: { answer: "B's" } } }));
    expect(askedA).toEqual(["job of A"]);
    expect(askedB).toEqual(["job of B"]);
  });
});
