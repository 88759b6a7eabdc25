import { Server } from "@modelcontextprotocol/server";
import { afterEach, describe, expect, it } from "vitest";
import { BoundedEventStore } from "../src/event-store";
import { JsonAnswerTransport, jsonAnswersOn, type PlainOutcome } from "../src/json-answers";

/**
 * The transport under codemux's `CODEMUX_JSON_ANSWERS` seam, with the SDK's real server on it: a
 * single request's answer comes back as the message itself; anything before it, a slow answer or a
 * close opens the SDK's own SSE stream; whatever the SDK would check or refuse takes its own path.
 */
const SESSION = "session-1";
const VERSION = "2025-11-25";
const HEADERS = {
  accept: "application/json, text/event-stream",
  "content-type": "application/json",
  "mcp-session-id": SESSION,
  "mcp-protocol-version": VERSION,
};
const head = (headers: Record<string, string> = HEADERS) => new Request("http://127.0.0.1/mcp", { method: "POST", headers });
const call = (id: number, name: string) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: {} } });

let open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const o of open.splice(0)) await o.close();
});

/** A session's transport, initialized, with a server whose `chatty` tool logs before answering and whose `held` tool answers when released. */
async function session(): Promise<{ transport: JsonAnswerTransport; release(): void }> {
  let release!: () => void;
  const held = new Promise<void>((r) => {
    release = r;
  });
  const server = new Server({ name: "t", version: "1" }, { capabilities: { tools: {}, logging: {} } });
  server.setRequestHandler("tools/call", async (request, ctx) => {
    if (request.params.name === "chatty") await ctx.mcpReq.notify({ method: "notifications/message", params: { level: "info", data: "working" } });
    if (request.params.name === "held") await held;
    return { content: [{ type: "text", text: `${request.params.name} done` }] };
  });
  const transport = new JsonAnswerTransport({ sessionIdGenerator: () => SESSION, eventStore: new BoundedEventStore() });
  await server.connect(transport);
  open.push(server);
  const init = { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: "c", version: "1" } } };
  const answer = await transport.handleRequest(head({ accept: HEADERS.accept, "content-type": "application/json" }), { parsedBody: init });
  expect(answer.status).toBe(200);
  await answer.text();
  return { transport, release };
}

async function sseText(outcome: PlainOutcome): Promise<string> {
  if (!("response" in outcome)) throw new Error("expected an SSE stream");
  expect(outcome.response.headers.get("content-type")).toBe("text/event-stream");
  expect(outcome.response.headers.get("mcp-session-id")).toBe(SESSION);
  return outcome.response.text();
}

describe("JsonAnswerTransport", () => {
  it("hands a request's answer back as the message, with no stream made", async () => {
    const { transport } = await session();
    const outcome = await transport.answerPlain(head(), call(1, "quiet"), { windowMs: 60_000 });
    expect(outcome).toEqual({ message: { jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "quiet done" }] } } });
    expect(await transport.answerPlain(head(), { jsonrpc: "2.0", id: 2, method: "no/such" }, { windowMs: 60_000 })).toMatchObject({
      message: { id: 2, error: { code: -32601 } },
    });
  });

  it("opens the SDK's resumable stream when a notification comes before the answer: priming event, the notification, the answer", async () => {
    const { transport } = await session();
    const text = await sseText((await transport.answerPlain(head(), call(3, "chatty"), { windowMs: 60_000 })) as PlainOutcome);
    const events = text.split("\n\n").filter(Boolean);
    expect(events[0]).toMatch(/^id: \S+\ndata: $/);
    expect(events[1]).toContain('"method":"notifications/message"');
    expect(events[2]).toContain('"id":3');
    expect(events[2]).toContain("chatty done");
  });

  it("opens the stream when the answer is slower than the window, and the answer follows on it", async () => {
    const { transport, release } = await session();
    const outcome = (await transport.answerPlain(head(), call(4, "held"), { windowMs: 5 })) as PlainOutcome;
    release();
    const text = await sseText(outcome);
    expect(text).toMatch(/^id: \S+\ndata: \n\n/);
    expect(text).toContain("held done");
  });

  it("lets a client that lost that stream resume it: the answer comes on the replay (Last-Event-ID)", async () => {
    const { transport, release } = await session();
    const outcome = (await transport.answerPlain(head(), call(7, "held"), { windowMs: 5 })) as { response: Response };
    const reader = (outcome.response.body as ReadableStream<Uint8Array>).getReader();
    const priming = new TextDecoder().decode((await reader.read()).value);
    const lastEventId = /^id: (\S+)\n/.exec(priming)?.[1] as string;
    await reader.cancel();
    release();
    const { accept: _, ...rest } = HEADERS;
    const replay = await transport.handleRequest(
      new Request("http://127.0.0.1/mcp", { method: "GET", headers: { ...rest, accept: "text/event-stream", "last-event-id": lastEventId } }),
    );
    const text = await replay.text();
    expect(text).toContain('"id":7');
    expect(text).toContain("held done");
  });

  it("ends a waiting request's stream when the session closes", async () => {
    const { transport } = await session();
    const waiting = transport.answerPlain(head(), call(5, "held"), { windowMs: 60_000 }) as Promise<PlainOutcome>;
    await transport.close();
    expect(await sseText(await waiting)).toMatch(/^id: \S+\ndata: \n\n$/);
  });

  it("leaves to the SDK what it would check or refuse: another session, an unknown version, a batch, no SSE in Accept, initialize", async () => {
    const { transport } = await session();
    expect(transport.answerPlain(head({ ...HEADERS, "mcp-session-id": "other" }), call(6, "quiet"), { windowMs: 60_000 })).toBeUndefined();
    expect(transport.answerPlain(head({ ...HEADERS, "mcp-protocol-version": "1999-01-01" }), call(6, "quiet"), { windowMs: 60_000 })).toBeUndefined();
    expect(transport.answerPlain(head({ ...HEADERS, accept: "application/json" }), call(6, "quiet"), { windowMs: 60_000 })).toBeUndefined();
    expect(transport.answerPlain(head({ ...HEADERS, "content-type": "text/plain" }), call(6, "quiet"), { windowMs: 60_000 })).toBeUndefined();
    expect(transport.answerPlain(head(), [call(6, "quiet")], { windowMs: 60_000 })).toBeUndefined();
    expect(transport.answerPlain(head(), { jsonrpc: "2.0", id: 6, method: "tools/call", params: "x" }, { windowMs: 60_000 })).toBeUndefined();
    expect(transport.answerPlain(head(), { jsonrpc: "2.0", id: 6, method: "initialize", params: {} }, { windowMs: 60_000 })).toBeUndefined();
    await transport.close();
    expect(transport.answerPlain(head(), call(6, "quiet"), { windowMs: 60_000 })).toBeUndefined();
  });

  it("is on unless CODEMUX_JSON_ANSWERS says 0, false or off", () => {
    expect(jsonAnswersOn({})).toBe(true);
    expect(jsonAnswersOn({ CODEMUX_JSON_ANSWERS: "1" })).toBe(true);
    for (const off of ["0", "false", " OFF "]) expect(jsonAnswersOn({ CODEMUX_JSON_ANSWERS: off })).toBe(false);
  });
});
