import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { ListPromptsRequestSchema, ListResourcesRequestSchema, ListToolsRequestSchema, ReadResourceRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { Codemux } from "../src/index";
import { config, servicesOf } from "./helpers";

// A 2025 server that marks every answer cacheable for an hour: SDK v2's client would keep them, codemux must not.
const HINT = { ttlMs: 3_600_000, cacheScope: "public" as const };
let core: Codemux | undefined;
afterEach(async () => {
  await core?.close();
  core = undefined;
});

function cachingServer() {
  const state = { resources: ["first"], prompts: ["p1"], reads: 0 };
  const createTransport = async () => {
    const [client, server] = InMemoryTransport.createLinkedPair();
    const mcp = new Server({ name: "caching", version: "1.0.0" }, { capabilities: { tools: {}, resources: {}, prompts: {} } });
    mcp.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [{ name: "t", inputSchema: { type: "object" as const } }] }));
    mcp.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: state.resources.map((name) => ({ uri: `test://${name}`, name })), ...HINT }));
    mcp.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: state.prompts.map((name) => ({ name })), ...HINT }));
    mcp.setRequestHandler(ReadResourceRequestSchema, async (request) => ({
      contents: [{ uri: request.params.uri, text: `read ${++state.reads}` }],
      ...HINT,
    }));
    await mcp.connect(server);
    return client;
  };
  return { state, poolOptions: { createTransport } };
}

describe("lists and reads through the downstream client", () => {
  it("are asked of the server each time, whatever caching hint it gave: codemux never answers from SDK v2's client cache", async () => {
    const server = cachingServer();
    core = new Codemux({ config: config({ c: { command: "unused" } }), poolOptions: server.poolOptions });
    core.start();
    await core.ready(5_000);
    const session = core.session();
    const { features } = servicesOf(core);
    expect((await features.listResources(session)).map((r) => r.name)).toEqual(["first"]);
    expect((await features.listPrompts(session)).map((p) => p.name)).toEqual(["c__p1"]);
    server.state.resources.push("second");
    server.state.prompts.push("p2");
    expect((await features.listResources(session)).map((r) => r.name)).toEqual(["first", "second"]);
    expect((await features.listPrompts(session)).map((p) => p.name)).toEqual(["c__p1", "c__p2"]);
    const read = async () => JSON.stringify(await features.readResource("test://first", { session, origin: "resources/read" }));
    expect(await read()).toContain("read 1");
    expect(await read()).toContain("read 2");
  });
});
