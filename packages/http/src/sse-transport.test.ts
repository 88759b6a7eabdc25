import { atTurnEnd } from "@codemux/core";
import type { JSONRPCMessage } from "@modelcontextprotocol/server";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { SseServerTransport } from "./sse-transport";

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

/**
 * A server whose GET opens one transport and whose POST hands its JSON body to that transport; returns what it saw.
 * `taken`: also called with each message handed on; `posted`: sees each post's response first.
 */
async function serve({ taken, posted }: { taken?: () => void; posted?: (res: ServerResponse) => void } = {}): Promise<{
  url: string;
  transport: () => SseServerTransport;
  received: JSONRPCMessage[];
  closes: () => number;
}> {
  let transport: SseServerTransport | undefined;
  let closes = 0;
  const received: JSONRPCMessage[] = [];
  const server = createServer((req, res) => {
    if (req.method === "GET") {
      transport = new SseServerTransport({ endpoint: "/messages?apikey=k", stream: res, sessionId: "a.0f3c" });
      transport.onmessage = (message) => {
        received.push(message);
        taken?.();
      };
      transport.onclose = () => closes++;
      void transport.start();
      return;
    }
    posted?.(res);
    let text = "";
    req.on("data", (chunk: Buffer) => (text += chunk));
    req.on("end", () => transport?.post(JSON.parse(text), res));
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, transport: () => transport as SseServerTransport, received, closes: () => closes };
}

/** Reads a stream's events until `count` have come. */
async function events(reader: ReadableStreamDefaultReader<Uint8Array>, count: number): Promise<string[]> {
  let text = "";
  while (text.split("\n\n").length <= count) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  return text.split("\n\n").slice(0, count);
}

describe("SseServerTransport", () => {
  it("opens with the endpoint carrying the session id, takes a posted message with 202, and sends messages as events", async () => {
    const s = await serve();
    const stream = await fetch(`${s.url}/sse`);
    expect(stream.headers.get("content-type")).toBe("text/event-stream");
    const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
    expect(await events(reader, 1)).toEqual(["event: endpoint\ndata: /messages?apikey=k&sessionId=a.0f3c"]);

    const ping = { jsonrpc: "2.0", id: 7, method: "ping" };
    const posted = await fetch(`${s.url}/messages`, { method: "POST", body: JSON.stringify(ping) });
    expect(posted.status).toBe(202);
    expect(s.received).toEqual([ping]);
    await s.transport().send({ jsonrpc: "2.0", id: 7, result: {} });
    expect(await events(reader, 1)).toEqual(['event: message\ndata: {"jsonrpc":"2.0","id":7,"result":{}}']);
    await reader.cancel();
  });

  it("answers a post's 202 after the downstream write its message started in that turn, not before", async () => {
    const order: string[] = [];
    const s = await serve({
      // As codemux's session does: the call reaches the pool a few promise turns after the message arrives, and the pool writes at the turn's end.
      taken: () => void Promise.resolve().then(() => Promise.resolve().then(() => atTurnEnd(() => order.push("downstream write")))),
      posted: (res) => {
        const writeHead = res.writeHead.bind(res);
        res.writeHead = ((...args: Parameters<typeof writeHead>) => (order.push("202"), writeHead(...args))) as typeof res.writeHead;
      },
    });
    const stream = await fetch(`${s.url}/sse`);
    await events((stream.body as ReadableStream<Uint8Array>).getReader(), 1);
    const posted = await fetch(`${s.url}/messages`, { method: "POST", body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }) });
    expect(posted.status).toBe(202);
    expect(order).toEqual(["downstream write", "202"]);
  });

  it("refuses a body that is no JSON-RPC message with a JSON-RPC 400, passing nothing on", async () => {
    const s = await serve();
    const stream = await fetch(`${s.url}/sse`);
    await events((stream.body as ReadableStream<Uint8Array>).getReader(), 1);
    for (const body of [{ hello: "world" }, [{ jsonrpc: "2.0", id: 1, method: "ping" }], "text", { jsonrpc: "1.0", id: 1, method: "ping" }]) {
      const posted = await fetch(`${s.url}/messages`, { method: "POST", body: JSON.stringify(body) });
      expect(posted.status).toBe(400);
      expect(((await posted.json()) as { error: { message: string } }).error.message).toBe(
        "The body is not a JSON-RPC message (a request, notification or response).",
      );
    }
    expect(s.received).toEqual([]);
  });

  it("closes once, whether the client leaves or the server closes, and then sends nothing and takes no post", async () => {
    const s = await serve();
    const controller = new AbortController();
    const stream = await fetch(`${s.url}/sse`, { signal: controller.signal });
    await events((stream.body as ReadableStream<Uint8Array>).getReader(), 1);
    controller.abort();
    await expect.poll(() => s.closes()).toBe(1);
    await s.transport().close();
    expect(s.closes()).toBe(1);
    await expect(s.transport().send({ jsonrpc: "2.0", method: "notifications/message" })).rejects.toThrow("The SSE stream is closed.");
    const late = await fetch(`${s.url}/messages`, { method: "POST", body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }) });
    expect(late.status).toBe(404);
    expect(s.received).toEqual([]);
  });
});
