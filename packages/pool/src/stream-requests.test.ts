import { describe, expect, it } from "vitest";
import { watchingStreams, type RequestId } from "./stream-requests";

/** A fetch that answers every request with `chunks` as the body of a response of `contentType`. */
const answering =
  (chunks: string[], contentType = "text/event-stream") =>
  async () =>
    new Response(
      new ReadableStream<Uint8Array>({
        start(controller) {
          for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
          controller.close();
        },
      }),
      { headers: { "content-type": contentType } },
    );

async function read(chunks: string[], options: { contentType?: string; watching?: boolean; body?: string } = {}) {
  const carried: Array<[RequestId, RequestId]> = [];
  const fetch = watchingStreams(answering(chunks, options.contentType), {
    watching: () => options.watching ?? true,
    carried: (request, carrier) => void carried.push([request, carrier]),
  });
  const response = await fetch("http://server/mcp", { method: "POST", body: options.body ?? '{"method":"tools/call","params":{},"jsonrpc":"2.0","id":7}' });
  return { carried, text: await response.text() };
}

const event = (message: object) => `event: message\ndata: ${JSON.stringify(message)}\n\n`;
const question = { jsonrpc: "2.0", id: 3, method: "elicitation/create", params: { message: "sure?" } };

describe("watchingStreams", () => {
  it("reports each request on a POST's stream with the id that POST carried, and passes the bytes on unchanged", async () => {
    const stream = event(question) + event({ jsonrpc: "2.0", method: "notifications/progress", params: {} }) + event({ jsonrpc: "2.0", id: 7, result: {} });
    // Cut everywhere, CRLF line ends included.
    const crlf = stream.replaceAll("\n", "\r\n");
    const chunks = crlf.match(/.{1,5}/gs) ?? [];
    const { carried, text } = await read(chunks);
    expect(carried).toEqual([[3, 7]]);
    expect(text).toBe(crlf);
  });

  it("reads a request's data over several data lines", async () => {
    const { carried } = await read(['data: {"jsonrpc":"2.0","id":"q1",\ndata: "method":"sampling/createMessage"}\n\n']);
    expect(carried).toEqual([["q1", 7]]);
  });

  it("skips an event larger than its bound without keeping it, and reads the next", async () => {
    const big = `data: {"method":"x","id":1,"pad":"${"a".repeat(1_300_000)}"}\n\n`;
    const { carried, text } = await read([big.slice(0, 500_000), big.slice(500_000, 1_000_000), big.slice(1_000_000), event(question)]);
    expect(carried).toEqual([[3, 7]]);
    expect(text.length).toBe(big.length + event(question).length);
  });

  it("leaves alone what is no POST's event stream, or while the connection does not watch", async () => {
    expect((await read([event(question)], { contentType: "application/json" })).carried).toEqual([]);
    expect((await read([event(question)], { watching: false })).carried).toEqual([]);
    // A body that carries no one request (a batch) names no carrier.
    expect((await read([event(question)], { body: "[]" })).carried).toEqual([]);
  });
});
