import { Socket } from "node:net";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ChildProcessTransport } from "../src/stdio-transport";

const rawServer = fileURLToPath(new URL("./fixtures/raw-server.mjs", import.meta.url));

describe("the stdio client transport's writes", () => {
  afterEach(() => vi.restoreAllMocks());

  it("sends the messages of one tick in one write to the server's stdin, and each is answered", async () => {
    const transport = new ChildProcessTransport({ type: "stdio", command: process.execPath, args: [rawServer], env: {} });
    const answered = new Set<unknown>();
    let all: () => void = () => undefined;
    const done = new Promise<void>((resolve) => {
      all = resolve;
    });
    transport.onmessage = (message) => {
      answered.add((message as { id?: unknown }).id);
      if (answered.size === 50) all();
    };
    await transport.start();
    const write = vi.spyOn(Socket.prototype, "_write" as never);
    const writev = vi.spyOn(Socket.prototype, "_writev" as never);
    try {
      await Promise.all(Array.from({ length: 50 }, (_, i) => transport.send({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "echo", arguments: { text: `m${i}` } } })));
      await done;
      // Uncorked, each message is a write (a syscall) of its own.
      expect(write.mock.calls.length + writev.mock.calls.length).toBeLessThanOrEqual(2);
    } finally {
      await transport.close();
    }
  });
});
