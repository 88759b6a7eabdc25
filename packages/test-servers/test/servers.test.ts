import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { misbehavingServerPath, replayServerPath } from "../dist/index.js";

const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

async function connect(args: string[]): Promise<Client> {
  const client = new Client({ name: "test", version: "1.0.0" });
  clients.push(client);
  await client.connect(new StdioClientTransport({ command: process.execPath, args, stderr: "pipe" }));
  return client;
}

describe("test servers", () => {
  it("the misbehaving server answers, counts and survives its own stdout noise", async () => {
    const client = await connect([misbehavingServerPath]);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("crash");
    expect(await client.callTool({ name: "noise", arguments: { lines: 2 } })).toMatchObject({ content: [{ text: "noisy but fine" }] });
    const second = await client.callTool({ name: "counter", arguments: {} });
    expect(JSON.parse((second.content as Array<{ text: string }>)[0]!.text)).toMatchObject({ calls: 2 });
  });

  it("the replay server serves a recorded catalog", async () => {
    const dir = await mkdtemp(join(tmpdir(), "replay-"));
    const file = join(dir, "demo.json");
    await writeFile(file, JSON.stringify([{ name: "do_it", description: "Does it.", inputSchema: { type: "object", properties: { x: { type: "number" } } } }]));
    const client = await connect([replayServerPath, file]);
    expect((await client.listTools()).tools).toEqual([expect.objectContaining({ name: "do_it" })]);
    const result = await client.callTool({ name: "do_it", arguments: { x: 1 } });
    expect(JSON.parse((result.content as Array<{ text: string }>)[0]!.text)).toEqual({ tool: "do_it", arguments: { x: 1 } });
    await rm(dir, { recursive: true, force: true });
  });
});
