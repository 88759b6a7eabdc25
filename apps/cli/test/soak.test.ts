import { misbehavingServerPath } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const cli = resolve(import.meta.dirname, "../dist/index.js");
let client: Client;
let transport: StdioClientTransport;

/** Resident memory of the codemux process, from /proc (Linux). */
const rssMB = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${transport.pid}/status`, "utf8"))![1]) / 1024;
const textOf = (r: unknown) => ((r as CallToolResult).content[0] as { text: string }).text;

beforeAll(async () => {
  client = new Client({ name: "soak", version: "1.0.0" });
  transport = new StdioClientTransport({
    command: process.execPath,
    args: [cli, "--no-cache", "--log-level", "error", "--", "m", "--", process.execPath, misbehavingServerPath],
    stderr: "pipe",
  });
  await client.connect(transport);
});
afterAll(async () => {
  await client.close();
});

async function mixedCalls(count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    switch (i % 6) {
      case 0:
        expect(
          JSON.parse(
            textOf(
              await client.callTool({
                name: "execute_code",
                arguments: { code: `import { echo } from "mcp/servers/m/echo";\nexport default await echo({ text: "${i}" });` },
              }),
            ),
          ).result,
        ).toBe(i);
        break;
      case 1:
        await client.callTool({ name: "search_tools", arguments: { query: "echo text", limit: 3 } });
        break;
      case 2:
        expect((await client.callTool({ name: "call_tool", arguments: { name: "m__huge", args: { bytes: 100_000 } } })).content).toHaveLength(1);
        break;
      default:
        expect(textOf(await client.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: `n${i}` } } }))).toBe(`n${i}`);
    }
  }
}

describe.skipIf(process.platform !== "linux")("soak", () => {
  it("keeps memory flat over 3,000 calls of every kind", async () => {
    // The sandbox's workers reuse one zeroed WebAssembly memory each, so fewer collections run and
    // their heaps settle higher over the first ~2,000 runs (once); after that, memory must stay flat.
    await mixedCalls(2100);
    const warm = rssMB();
    await mixedCalls(3000);
    const after = rssMB();
    expect(after - warm).toBeLessThan(60);
  }, 300_000);

  it("answers 200 concurrent calls", async () => {
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => client.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: `c${i}` } } })),
    );
    expect(results.map(textOf)).toEqual(Array.from({ length: 200 }, (_, i) => `c${i}`));
  });
});
