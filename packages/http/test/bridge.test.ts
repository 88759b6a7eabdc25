import type { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/server";
import { createServer, request, type IncomingMessage, type Server } from "node:http";
import { connect } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { bridgeRequest, webRequestOf } from "../src/bridge";
import { TOKENS, bearer, raw, serve, type Served } from "./helpers";

const ACCEPT = { accept: "application/json, text/event-stream", "content-type": "application/json" };
const enc = new TextEncoder();
const priming = (id: string) => enc.encode(`id: ${id}\ndata: \n\n`);
const event = (message: unknown, id = "s_1") => enc.encode(`event: message\nid: ${id}\ndata: ${JSON.stringify(message)}\n\n`);

describe("answers on /mcp", () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve();
  });
  afterAll(async () => {
    await s?.close();
  });

  async function open(): Promise<Record<string, string>> {
    const init = await raw(`${s.url}/mcp`, {
      method: "POST",
      headers: { ...ACCEPT, ...bearer(TOKENS.alice) },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
      }),
    });
    expect(init.status).toBe(200);
    const headers = { ...ACCEPT, ...bearer(TOKENS.alice), "mcp-session-id": String(init.headers["mcp-session-id"]), "mcp-protocol-version": "2025-11-25" };
    await raw(`${s.url}/mcp`, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) });
    return headers;
  }

  it("a call answered with nothing before it comes back as one JSON body, with the session id", async () => {
    const headers = await open();
    const res = await raw(`${s.url}/mcp`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 7,
        method: "tools/call",
        params: { name: "call_tool", arguments: { name: "m__echo", args: { text: "plain" } } },
      }),
    });
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("application/json");
    expect(res.headers["mcp-session-id"]).toBe(headers["mcp-session-id"]);
    expect(res.headers["transfer-encoding"]).toBeUndefined();
    const body = JSON.parse(res.body);
    expect(body).toMatchObject({ jsonrpc: "2.0", id: 7, result: { content: [{ type: "text", text: "plain" }] } });
  });

  it("a request head with bytes a web Headers object might refuse (obs-text, empty values, repeats) is served, not a 500", async () => {
    const headers = await open();
    const body = JSON.stringify({ jsonrpc: "2.0", id: 9, method: "ping" });
    const head = [
      "POST /mcp HTTP/1.1",
      `Host: 127.0.0.1:${s.http.port}`,
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
      "X-Latin: caf\xe9 \xff",
      "X-Empty:",
      "X-Dup: a",
      "X-Dup: b",
      `Content-Length: ${Buffer.byteLength(body)}`,
      "Connection: close",
    ].join("\r\n");
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(s.http.port, "127.0.0.1");
      let text = "";
      socket.on("data", (d: Buffer) => {
        text += d.toString("latin1");
      });
      socket.on("end", () => resolve(text));
      socket.on("error", reject);
      socket.end(Buffer.concat([Buffer.from(`${head}\r\n\r\n`, "latin1"), Buffer.from(body)]));
    });
    expect(answer.split("\r\n")[0]).toBe("HTTP/1.1 200 OK");
    expect(answer).toContain('"id":9');
  });

  it("a call that streams progress before its answer keeps its SSE stream, progress first", async () => {
    const headers = await open();
    const res = await raw(`${s.url}/mcp`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 8,
        method: "tools/call",
        params: { name: "call_tool", arguments: { name: "m__slow", args: { ms: 200, steps: 2 } }, _meta: { progressToken: "p1" } },
      }),
    });
    expect(res.headers["content-type"]).toBe("text/event-stream");
    const events = res.body
      .split("\n\n")
      .map((e) => /^data: (.+)$/m.exec(e)?.[1])
      .filter((d): d is string => Boolean(d))
      .map((d) => JSON.parse(d));
    expect(events[0]).toMatchObject({ method: "notifications/progress", params: { progressToken: "p1" } });
    expect(events.at(-1)).toMatchObject({ id: 8, result: { content: [{ text: "slept 200 ms" }] } });
  });
});

/** A stand-in for the SDK transport: answers every request with the Response the test builds. */
function fakeTransport(answer: () => Response): WebStandardStreamableHTTPServerTransport {
  return { handleRequest: async () => answer() } as unknown as WebStandardStreamableHTTPServerTransport;
}

describe("bridgeRequest", () => {
  let server: Server;
  let url: string;
  let answer: () => Response = () => new Response(null, { status: 202 });
  let windowMs = 1000;
  beforeAll(async () => {
    server = createServer(
      (req, res) =>
        void bridgeRequest(
          fakeTransport(() => answer()),
          { req, res, body: {}, windowMs },
        ),
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  });
  afterEach(() => {
    windowMs = 1000;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  /** An SSE body the test feeds chunk by chunk. */
  function controlled(): { controller: ReadableStreamDefaultController<Uint8Array>; cancelled: Promise<void>; asked: Promise<void> } {
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    let onCancel!: () => void;
    let onAsked!: () => void;
    const cancelled = new Promise<void>((r) => {
      onCancel = r;
    });
    const asked = new Promise<void>((r) => {
      onAsked = r;
    });
    const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c), cancel: () => onCancel() });
    answer = () => {
      onAsked();
      return new Response(body, { headers: { "content-type": "text/event-stream", "mcp-session-id": "abc" } });
    };
    return { controller, cancelled, asked };
  }

  it("sends one message and an ended stream as JSON, the bytes of its data line unchanged", async () => {
    const { controller } = controlled();
    const message = { result: { text: 'é \\n " data: x' }, jsonrpc: "2.0", id: 1 };
    controller.enqueue(priming("s_0"));
    controller.enqueue(event(message));
    controller.close();
    const res = await raw(url, { method: "POST", headers: ACCEPT, body: "{}" });
    expect(res.headers["content-type"]).toBe("application/json");
    expect(res.headers["mcp-session-id"]).toBe("abc");
    expect(res.body).toBe(JSON.stringify(message));
  });

  it("keeps the stream when the stream goes on after the first message, holding nothing back", async () => {
    const { controller } = controlled();
    controller.enqueue(priming("s_0"));
    controller.enqueue(event({ method: "notifications/progress", jsonrpc: "2.0" }, "s_1"));
    setTimeout(() => {
      controller.enqueue(event({ result: {}, jsonrpc: "2.0", id: 1 }, "s_2"));
      controller.close();
    }, 20);
    const res = await raw(url, { method: "POST", headers: ACCEPT, body: "{}" });
    expect(res.headers["content-type"]).toBe("text/event-stream");
    expect(res.body).toBe(
      `id: s_0\ndata: \n\nevent: message\nid: s_1\ndata: {"method":"notifications/progress","jsonrpc":"2.0"}\n\nevent: message\nid: s_2\ndata: {"result":{},"jsonrpc":"2.0","id":1}\n\n`,
    );
  });

  it("opens the stream (priming event first) once the answer is slower than the window", async () => {
    windowMs = 10;
    const { controller } = controlled();
    controller.enqueue(priming("s_0"));
    let headersSeenBeforeAnswer = false;
    const res = await new Promise<{ type: string | undefined; body: string }>((resolve, reject) => {
      const req = request(url, { method: "POST", headers: ACCEPT, agent: false }, (r) => {
        headersSeenBeforeAnswer = true;
        let body = "";
        r.on("data", (d: Buffer) => {
          body += d;
        });
        r.on("end", () => resolve({ type: r.headers["content-type"], body }));
        // The stream is open with nothing but the priming event: now the answer comes.
        controller.enqueue(event({ result: {}, jsonrpc: "2.0", id: 1 }));
        controller.close();
      });
      req.on("error", reject);
      req.end("{}");
    });
    expect(headersSeenBeforeAnswer).toBe(true);
    expect(res.type).toBe("text/event-stream");
    expect(res.body.startsWith("id: s_0\ndata: \n\n")).toBe(true);
  });

  it("passes through what it does not recognise as one SDK message event, and streams GET at once", async () => {
    for (const odd of ['event: message\ndata: {"a":\ndata: 1}\n\n', "event: other\ndata: {}\n\n", ": comment\n\n", "data: {}\n\n"]) {
      const { controller } = controlled();
      controller.enqueue(enc.encode(odd));
      controller.close();
      const res = await raw(url, { method: "POST", headers: ACCEPT, body: "{}" });
      expect(res.headers["content-type"]).toBe("text/event-stream");
      expect(res.body).toBe(odd);
    }
    const { cancelled } = controlled();
    const opened = await new Promise<IncomingMessage>((resolve) => request(url, { method: "GET", agent: false }, resolve).end());
    expect(opened.headers["content-type"]).toBe("text/event-stream");
    // A client that goes away cancels the SDK's stream (its keep-alive timer and mapping go with it).
    opened.destroy();
    await cancelled;
  });

  it("a client gone before the answer cancels the stream and nothing is written", async () => {
    const { cancelled, asked } = controlled();
    const req = request(url, { method: "POST", headers: ACCEPT, agent: false });
    req.on("error", () => undefined);
    req.end("{}");
    await asked;
    req.destroy();
    await cancelled;
  });
});

describe("webRequestOf (hostile request heads)", () => {
  function fake(headers: Record<string, string>, url = "/mcp?x=1", method = "POST"): IncomingMessage {
    const rawHeaders = Object.entries(headers).flat();
    return {
      headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])),
      rawHeaders,
      url,
      method,
    } as unknown as IncomingMessage;
  }

  it("keeps method, path and every header, repeated ones included", () => {
    const req = fake({ Host: "127.0.0.1:3920", Accept: "application/json", "X-Dup": "a" });
    (req.rawHeaders as string[]).push("X-Dup", "b");
    const web = webRequestOf(req);
    expect(web.method).toBe("POST");
    expect(web.url).toBe("http://127.0.0.1:3920/mcp?x=1");
    expect(web.headers.get("accept")).toBe("application/json");
    expect(web.headers.get("x-dup")).toBe("a, b");
    // The socket's body is never handed over: the gateway has read (and bounded) it already.
    expect(web.body).toBeNull();
  });

  it("never throws on a Host or target that makes no URL, and never lets the target pick the origin", () => {
    for (const host of ["a b", "[::1", "x/y@evil", "", "%"]) {
      expect(() => webRequestOf(fake({ Host: host }))).not.toThrow();
    }
    expect(new URL(webRequestOf(fake({ Host: "127.0.0.1" }, "//evil.example/mcp")).url).host).toBe("127.0.0.1");
    expect(new URL(webRequestOf(fake({ Host: "127.0.0.1" }, "http://evil.example/mcp")).url).host).not.toBe("evil.example");
  });

  it("gives a Host the same origin every time, whether remembered or not, and forgets the oldest of many", () => {
    const urlOf = (host: string) => webRequestOf(fake({ Host: host })).url;
    for (let round = 0; round < 2; round++) {
      expect(urlOf("127.0.0.1:3920")).toBe("http://127.0.0.1:3920/mcp?x=1");
      expect(urlOf("x/y@evil")).toBe("http://codemux.invalid/mcp?x=1");
      expect(urlOf("user:pw@host")).toBe("http://codemux.invalid/mcp?x=1");
    }
    for (let i = 0; i < 200; i++) expect(urlOf(`h${i}.example:${i + 1000}`)).toBe(`http://h${i}.example:${i + 1000}/mcp?x=1`);
    expect(urlOf("x/y@evil")).toBe("http://codemux.invalid/mcp?x=1");
  });
});
