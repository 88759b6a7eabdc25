import { Socket } from "node:net";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ChildProcessTransport } from "../src/stdio-transport";

const rawServer = fileURLToPath(new URL("./fixtures/raw-server.mjs", import.meta.url));

/** A started transport to the raw echo server, `done` once `count` answers came back, and spies on its socket writes. */
async function echoTransport(count: number) {
  const transport = new ChildProcessTransport({ type: "stdio", command: process.execPath, args: [rawServer], env: {} });
  const answered = new Set<unknown>();
  let all: () => void = () => undefined;
  const done = new Promise<void>((resolve) => {
    all = resolve;
  });
  transport.onmessage = (message) => {
    answered.add((message as { id?: unknown }).id);
    if (answered.size === count) all();
  };
  await transport.start();
  const write = vi.spyOn(Socket.prototype, "_write" as never);
  const writev = vi.spyOn(Socket.prototype, "_writev" as never);
  return { transport, done, write, writev };
}

const echoCall = (i: number) => ({ jsonrpc: "2.0" as const, id: i, method: "tools/call", params: { name: "echo", arguments: { text: `m${i}` } } });

describe("the stdio client transport's writes", () => {
  afterEach(() => vi.restoreAllMocks());

  it("sends the messages of one tick in one write to the server's stdin, and each is answered", async () => {
    const { transport, done, write, writev } = await echoTransport(50);
    try {
      await Promise.all(Array.from({ length: 50 }, (_, i) => transport.send(echoCall(i))));
      await done;
      // Uncorked, each message is a write (a syscall) of its own; corked, they are 50 chunks handed to writev.
      expect(write.mock.calls.length + writev.mock.calls.length).toBeLessThanOrEqual(2);
      expect(writev).not.toHaveBeenCalled();
    } finally {
      await transport.close();
    }
  });

  it("sends the messages of separate callbacks of one turn of the event loop (many clients' requests read in one poll) in one write", async () => {
    const { transport, done, write, writev } = await echoTransport(10);
    try {
      // Ten callbacks of one check phase, each a macrotask of its own as an HTTP request's handler is: a flush on the
      // next tick would write after each of them.
      const sent = await new Promise<Array<Promise<void>>>((resolve) => {
        const sends: Array<Promise<void>> = [];
        for (let i = 0; i < 10; i++)
          setImmediate(() => {
            sends.push(transport.send(echoCall(i)));
            if (sends.length === 10) resolve(sends);
          });
      });
      await Promise.all(sent);
      await done;
      expect(write.mock.calls.length + writev.mock.calls.length).toBe(1);
    } finally {
      await transport.close();
    }
  });

  it("a tick's messages larger than the pipe's buffer all arrive, and their sends settle", async () => {
    const transport = new ChildProcessTransport({ type: "stdio", command: process.execPath, args: [rawServer], env: {} });
    const answers = new Map<unknown, string>();
    let all: () => void = () => undefined;
    const done = new Promise<void>((resolve) => {
      all = resolve;
    });
    transport.onmessage = (message) => {
      const { id, result } = message as unknown as { id: number; result: { content: Array<{ text: string }> } };
      answers.set(id, result.content[0]?.text ?? "");
      if (answers.size === 20) all();
    };
    await transport.start();
    try {
      const text = (i: number) => `${i}`.padEnd(100_000, "x");
      await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          transport.send({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "echo", arguments: { text: text(i) } } }),
        ),
      );
      await done;
      for (let i = 0; i < 20; i++) expect(answers.get(i)).toBe(text(i));
    } finally {
      await transport.close();
    }
  });

  it("messages sent in the tick the transport closes still reach the server", async () => {
    const transport = new ChildProcessTransport({ type: "stdio", command: process.execPath, args: [rawServer], env: {} });
    await transport.start();
    const stdin = vi.spyOn(Socket.prototype, "_write" as never);
    const sent = transport.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    await transport.close();
    await sent;
    expect(stdin).toHaveBeenCalledTimes(1);
  });

  it("a send after the server exited is refused", async () => {
    const transport = new ChildProcessTransport({ type: "stdio", command: process.execPath, args: [rawServer], env: {} });
    await transport.start();
    await transport.close();
    await expect(transport.send({ jsonrpc: "2.0", method: "notifications/initialized" })).rejects.toThrow(/not running/);
  });
});
