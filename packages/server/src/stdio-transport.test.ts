import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { StdioServerTransport } from "./stdio-transport";

async function exchange(input: string[], maxMessageBytes?: number) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const transport = new StdioServerTransport(stdin, stdout, maxMessageBytes ? { maxMessageBytes } : {});
  const received: unknown[] = [];
  transport.onmessage = (m) => received.push(m);
  await transport.start();
  for (const chunk of input) stdin.write(chunk);
  await new Promise((r) => setImmediate(r));
  const replies = (stdout.read()?.toString() ?? "")
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l: string) => JSON.parse(l));
  await transport.close();
  return { received, replies };
}

describe("StdioServerTransport", () => {
  it("answers requests still in flight when stdin ends, then closes", async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const transport = new StdioServerTransport(stdin, stdout);
    let closed = false;
    const whenClosed = new Promise<void>((resolve) => {
      transport.onclose = () => {
        closed = true;
        resolve();
      };
    });
    // A slow handler: it answers only when the test says so, after stdin has ended.
    let answer: (() => Promise<void>) | undefined;
    const asked = new Promise<void>((resolve) => {
      transport.onmessage = (m) => {
        const id = "id" in m ? m.id : undefined;
        if (id !== undefined) answer = () => transport.send({ jsonrpc: "2.0", id, result: {} });
        resolve();
      };
    });
    await transport.start();
    stdin.end('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    await asked;
    await new Promise((r) => setImmediate(r));
    expect(closed).toBe(false);
    await answer?.();
    await whenClosed;
    expect(closed).toBe(true);
    expect(JSON.parse(stdout.read().toString())).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
  });

  it("waits for a slow reader with one listener, however many answers are queued", async () => {
    const stdout = new PassThrough({ highWaterMark: 16 });
    const transport = new StdioServerTransport(new PassThrough(), stdout);
    const sends = Array.from({ length: 50 }, (_, i) => transport.send({ jsonrpc: "2.0", id: i, result: {} }));
    expect(stdout.listenerCount("drain")).toBe(1);
    stdout.resume();
    await Promise.all(sends);
    expect(stdout.listenerCount("drain")).toBe(0);
  });

  it("answers invalid JSON with a parse error and keeps reading", async () => {
    const { received, replies } = await exchange(['{"broken": \n', '{"jsonrpc":"2.0","id":7,"method":"ping"}\n']);
    expect(replies).toEqual([{ jsonrpc: "2.0", id: null, error: { code: -32700, message: expect.stringMatching(/^Parse error/) } }]);
    expect(received).toEqual([{ jsonrpc: "2.0", id: 7, method: "ping" }]);
  });

  it("answers a request that is not JSON-RPC with its id, and drops a broken notification", async () => {
    const { received, replies } = await exchange(['{"id":3,"method":5}\n', '{"jsonrpc":"1.0","method":"x"}\n', "[1,2]\n"]);
    expect(replies).toEqual([
      { jsonrpc: "2.0", id: 3, error: { code: -32600, message: expect.stringContaining("Invalid Request") } },
      { jsonrpc: "2.0", id: null, error: { code: -32600, message: expect.stringContaining("Invalid Request") } },
    ]);
    expect(received).toEqual([]);
  });

  it("refuses an oversized request and serves the next one", async () => {
    const big = `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"${"y".repeat(5000)}"}}\n`;
    const { received, replies } = await exchange([big.slice(0, 3000), big.slice(3000), '{"jsonrpc":"2.0","id":2,"method":"ping"}\n'], 1024);
    expect(replies).toEqual([{ jsonrpc: "2.0", id: null, error: { code: -32600, message: expect.stringMatching(/^Request too large/) } }]);
    expect(received).toEqual([{ jsonrpc: "2.0", id: 2, method: "ping" }]);
  });
});
