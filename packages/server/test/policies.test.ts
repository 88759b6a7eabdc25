import type { SessionInfo } from "@codemux/core";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Codemux, policiesOf } from "../src/index";
import { config, misbehaving, textOf } from "./helpers";

/**
 * Policies matched by group claims (an OAuth group, a token's groups) on a core used directly, as the
 * front ends do: the session's claims, not only its principal, decide what it sees, down to the modules
 * a saved skill is type-checked against; and the stdio owner stays unrestricted.
 */
let dir: string;
let core: Codemux;
const ops: SessionInfo = { id: "ops-session", principal: "oauth:https://idp.example#7", groups: ["ops"] };
const stranger: SessionInfo = { id: "stranger-session", principal: "oauth:https://idp.example#8" };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "codemux-policies-"));
  const policies = policiesOf({ policies: { rules: [{ name: "ops", groups: ["ops"], tools: ["m__echo"] }] } }, "codemux.json");
  // "slow" is still connecting through the tests: notes on servers still connecting must not name it to whom it is hidden.
  const servers = { m: misbehaving(), slow: misbehaving("--start-delay-ms", "60000") };
  core = new Codemux({ config: config(servers), dataDir: dir, discoveryWaitMs: 50, startupWaitMs: 50, ...(policies ? { policies } : {}) });
  core.start();
  await core.ready(3_000);
});
afterAll(async () => {
  await core.close();
  await rm(dir, { recursive: true, force: true });
});

const run = async (session: SessionInfo, name: string, args: Record<string, unknown>) => core.surface("code").callTool(name, args, { session, origin: "cli" });
const skill = {
  name: "shout",
  description: "Echoes.",
  code: 'import { echo } from "mcp/servers/m/echo";\nexport async function shout(input: { text: string }): Promise<unknown> { return echo(input); }\n',
};

describe("policies by group claims", () => {
  it("show a session the tools its group's rule shows, and nothing to one without the claim", async () => {
    expect(textOf(await run(ops, "call_tool", { name: "m__echo", args: { text: "hi" } }))).toBe("hi");
    expect(textOf(await run(ops, "call_tool", { name: "m__counter", args: {} }))).toMatch(/^No tool named "m__counter"/);
    expect(textOf(await run(stranger, "call_tool", { name: "m__echo", args: { text: "hi" } }))).toMatch(/^No tool named "m__echo"/);
    expect(textOf(await run(stranger, "search_tools", { query: "echo text" }))).not.toContain("m__echo");
  });

  it("type-check a saved skill against the modules the saving session's claims show", async () => {
    expect((await run(ops, "save_skill", skill)).isError).toBeFalsy();
    const refused = await run(stranger, "save_skill", skill);
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain("mcp/servers/m/echo");
  });

  it("name a server still connecting only to a session that may know of it", async () => {
    expect(textOf(await run(core.session(), "search_tools", { query: "echo text" }))).toContain("(still connecting: slow;");
    expect(textOf(await run(ops, "search_tools", { query: "echo text" }))).not.toContain("slow");
    expect(textOf(await run(ops, "list_modules", {}))).not.toContain("slow");
  });

  it("leave the stdio owner unrestricted when no rule names local", async () => {
    expect(textOf(await run(core.session(), "call_tool", { name: "m__counter", args: {} }))).not.toMatch(/No tool named/);
  });
});

describe("policies on reload", () => {
  it("are read again with the servers, and an edit with a mistake keeps the last good ones", async () => {
    const servers = config({ m: misbehaving() });
    let next: unknown = { rules: [{ name: "echo-only", principals: ["token:x"], tools: ["m__echo"] }] };
    const read = async () => policiesOf({ policies: next }, "codemux.json");
    const policies = await read();
    const reloading = new Codemux({ config: servers, reloadPolicies: read, ...(policies ? { policies } : {}) });
    reloading.start();
    await reloading.ready();
    const x: SessionInfo = { id: "x", principal: "token:x" };
    const counter = async () => textOf(await reloading.surface("code").callTool("call_tool", { name: "m__counter", args: {} }, { session: x, origin: "cli" }));
    try {
      expect(await counter()).toMatch(/^No tool named "m__counter"/);
      next = { rules: [{ name: "all", principals: ["token:x"], tools: ["m"] }] };
      await reloading.reload(servers);
      expect(await counter()).not.toMatch(/No tool named/);
      next = { rules: [{ name: "broken", principals: ["token:x"] }] };
      await expect(reloading.reload(servers)).rejects.toThrow(/policies\.rules\[0\]\.tools: is required/);
      expect(await counter()).not.toMatch(/No tool named/);
    } finally {
      await reloading.close();
    }
  });
});
