import { defineMetaTool, textResult } from "@codemux/core";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Codemux, createSessionServer } from "../src/index";
import { config, misbehaving, textOf } from "./helpers";

// A meta-tool only clients with sampling are shown, with an alias accepted on input but not listed.
const sampled = defineMetaTool<{ text: string; words?: string }>({
  name: "sampled",
  description: "Needs the client's model.",
  inputSchema: { type: "object", properties: { text: { type: "string" }, words: { type: "string", unlisted: true } } },
  listed: (session) => Boolean(session?.peer?.capabilities()?.sampling),
  run: async ({ text, words }) => textResult(`${text ?? ""}|${words ?? ""}`),
});

let core: Codemux;
const clients: Client[] = [];

async function client(capabilities: Record<string, unknown>): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createSessionServer(core.sessions).connect(serverSide);
  const c = new Client({ name: "test", version: "1.0.0" }, { capabilities });
  await c.connect(clientSide);
  clients.push(c);
  return c;
}

beforeAll(() => {
  core = new Codemux({ config: config({ bad: misbehaving() }), metaTools: [sampled] });
  core.start();
});
afterAll(async () => {
  for (const c of clients) await c.close();
  await core.close();
});

describe("the tool list of each session", () => {
  it("shows a capability's tool only to a client that declared it, on one core", async () => {
    const plain = await client({});
    const sampling = await client({ sampling: {} });
    expect((await plain.listTools()).tools.map((t) => t.name)).not.toContain("sampled");
    expect((await sampling.listTools()).tools.map((t) => t.name)).toContain("sampled");
    // A caller without a session (the CLI's status line) sees the plain list.
    expect((await core.surface("code").listTools()).map((t) => t.name)).not.toContain("sampled");
  });

  it("leaves unlisted properties out of the listing but reads them on input", async () => {
    const sampling = await client({ sampling: {} });
    const tool = (await sampling.listTools()).tools.find((t) => t.name === "sampled");
    expect(Object.keys(tool?.inputSchema.properties ?? {})).toEqual(["text"]);
    expect(textOf((await sampling.callTool({ name: "sampled", arguments: { text: "a", words: "b" } })) as CallToolResult)).toBe("a|b");
  });
});
