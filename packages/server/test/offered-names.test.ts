import type { SessionInfo } from "@codemux/core";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it, vi } from "vitest";
import { Codemux, createSessionServer, policiesOf } from "../src/index";
import { createSession } from "../src/session";
import { config, misbehaving, textOf } from "./helpers";

/**
 * A client's tools/call checks the name against the names it is offered (the unknown-tool error): a set kept per
 * caller and forgotten on every change of the tools or the policies, so the check is a lookup and not a tools/list per
 * call, while what each principal may call stays exactly what its tools/list shows.
 */
const closing: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

async function clientOf(core: Codemux, session: SessionInfo): Promise<(name: string, args?: Record<string, unknown>) => Promise<string>> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createSessionServer(core.sessions, { session }).connect(serverSide);
  const client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(clientSide);
  closing.push(() => client.close());
  return async (name, args = {}) => textOf((await client.callTool({ name, arguments: args })) as CallToolResult);
}

describe("the unknown-tool check of a call", () => {
  it("lists the tools once per caller, not per call, and follows reloaded policies and servers", async () => {
    let rules: unknown = [
      { name: "x", principals: ["token:x"], tools: ["m"] },
      { name: "y", principals: ["token:y"], tools: ["m__echo"] },
    ];
    const read = async () => policiesOf({ policies: { rules } }, "codemux.json");
    const servers = config({ m: misbehaving() });
    const core = new Codemux({ config: servers, mode: "passthrough", reloadPolicies: read, policies: (await read())! });
    closing.push(() => core.close());
    core.start();
    await core.ready();
    const listTools = vi.spyOn(core.surface(), "listTools");
    const x = await clientOf(core, { id: "x-session", principal: "token:x" });
    const y = await clientOf(core, { id: "y-session", principal: "token:y" });

    for (let i = 0; i < 5; i++) expect(await x("m__echo", { text: `hi ${i}` })).toBe(`hi ${i}`);
    expect(listTools).toHaveBeenCalledTimes(1);
    expect(JSON.parse(await x("m__counter")).pid).toBeGreaterThan(0);
    expect(listTools).toHaveBeenCalledTimes(1);

    // Another principal on the same core is checked against its own grant, never x's set.
    expect(await y("m__echo", { text: "y" })).toBe("y");
    await expect(y("m__counter")).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('Unknown tool "m__counter"') });

    // A reload that narrows x's grant: the set x had is gone, and the call is refused as tools/list now shows.
    rules = [{ name: "x", principals: ["token:x"], tools: ["m__echo"] }];
    await core.reload(servers);
    await expect(x("m__counter")).rejects.toMatchObject({ code: -32602, message: expect.stringContaining("this client is offered m__echo") });
    expect(await x("m__echo", { text: "still" })).toBe("still");

    // And one that widens it again.
    rules = [{ name: "x", principals: ["token:x"], tools: ["m"] }];
    await core.reload(servers);
    expect(JSON.parse(await x("m__counter")).pid).toBeGreaterThan(0);

    // A server removed: its tools are unknown at once.
    await core.reload(config({}));
    await expect(x("m__echo", { text: "gone" })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('Unknown tool "m__echo"') });
  });

  it("starts a call whose name is in the caller's set in the same turn, with no wait before it", async () => {
    const core = new Codemux({ config: config({ m: misbehaving() }), mode: "passthrough" });
    closing.push(() => core.close());
    core.start();
    await core.ready();
    const session = createSession(core.sessions, { session: { id: "s", principal: "local" } });
    const extra = { signal: new AbortController().signal, requestId: 1, sendNotification: async () => undefined };
    const params = { name: "m__echo", arguments: { text: "hi" } };
    // The first call lists the tools (a wait); the set it leaves answers the next one's check at once.
    expect(textOf((await session.callTool(params, extra)) as CallToolResult)).toBe("hi");
    const callTool = vi.spyOn(core.surface("passthrough"), "callTool");
    const answer = session.callTool(params, { ...extra, requestId: 2 });
    expect(callTool).toHaveBeenCalledTimes(1);
    expect(textOf((await answer) as CallToolResult)).toBe("hi");
  });
});
