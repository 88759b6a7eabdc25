import { until } from "@codemux/test-servers";
import { Codemux, createSessionServer } from "@codemux/server";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadPlugins, PluginConfigError, readPinFile, type LoadedPlugins } from "@codemux/hooks";
import { config, misbehaving, recordingLogger, tempDir, textOf } from "./harness";

interface Gate {
  entered: string[];
  closed: string[];
  release: Promise<void>;
}
const gate = globalThis as unknown as { __tag: Gate };

/** A plugin module whose options say how it marks results; a call of echo "hold" waits in beforeCall until the test releases it. */
const TAG_PLUGIN = `export default (o) => ({
  name: "tag",
  async beforeCall(call) { globalThis.__tag.entered.push(o.tag); if (call.arguments.text === "hold") await globalThis.__tag.release; },
  afterCall: (call, result) => ({ ...result, content: [...result.content, { type: "text", text: o.tag }] }),
  close() { globalThis.__tag.closed.push(o.tag); },
});
`;

let stop: (() => Promise<void>) | undefined;
afterEach(async () => {
  await stop?.();
  stop = undefined;
});

/** codemux as the CLI wires it (plugins in the pipeline, the catalog told to them), one SDK client, and a reload of the plugins section. */
async function serve(plugins: unknown) {
  const dir = tempDir();
  writeFileSync(join(dir, "tag.mjs"), TAG_PLUGIN);
  const servers = { s: misbehaving() };
  const loaded: LoadedPlugins = await loadPlugins({
    config: { mcpServers: servers, plugins },
    configFile: join(dir, "codemux.json"),
    dataDir: dir,
    logger: recordingLogger(),
  });
  const core = new Codemux({ config: config(servers), mode: "passthrough", middleware: [loaded.middleware], mask: loaded.mask });
  core.on("toolsChanged", () => void loaded.toolsChanged(core.catalog.entries()));
  core.start();
  await core.ready();
  await loaded.toolsChanged(core.catalog.entries());
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createSessionServer(core.sessions).connect(serverSide);
  const client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(clientSide);
  stop = async () => {
    await client.close();
    await core.close();
    await loaded.close();
  };
  const echo = async (text: string) => textOf((await client.callTool({ name: "s__echo", arguments: { text } })) as CallToolResult);
  return { dir, loaded, echo, reload: (next: unknown) => loaded.reload({ mcpServers: servers, plugins: next }) };
}

describe("reloading the plugins section while serving", () => {
  it("puts a plugin turned on in force from the next call, and takes one turned off out", async () => {
    const { dir, loaded, echo, reload } = await serve({});
    expect(await echo("a")).toBe("a");
    expect(await reload({ guard: { deny: ["s__echo"] }, pin: {} })).toEqual({ added: ["guard", "pin"], removed: [], changed: [] });
    expect(await echo("b")).toContain("denied by the guard plugin");
    // pin records what the catalog lists at once, as when it starts with codemux.
    await until(async () => Object.keys((await readPinFile(join(dir, "pins.json"))).tools).includes("s__structured"));
    expect(await reload({ pin: {} })).toEqual({ added: [], removed: ["guard"], changed: [] });
    expect(await echo("c")).toBe("c");
    expect(loaded.plugins.map((p) => p.name)).toEqual(["pin"]);
  });

  it("finishes a call in flight on the plugins it began with, closing them only after it", async () => {
    let release!: () => void;
    gate.__tag = { entered: [], closed: [], release: new Promise((resolve) => (release = resolve)) };
    const { echo, reload } = await serve({ tagger: { module: "./tag.mjs", options: { tag: "one" } } });
    const held = echo("hold");
    await until(() => gate.__tag.entered.includes("one"));
    expect(await reload({ tagger: { module: "./tag.mjs", options: { tag: "two" } } })).toEqual({ added: [], removed: [], changed: ["tagger"] });
    expect(await echo("next")).toBe("next\ntwo");
    expect(gate.__tag.closed).toEqual([]);
    release();
    expect(await held).toBe("hold\none");
    await until(() => gate.__tag.closed.includes("one"));
    expect(gate.__tag.closed).toEqual(["one"]);
  });

  it("keeps the running plugin of an entry that did not change, with its state", async () => {
    const limit = { limits: [{ by: ["principal"], calls: 1, perMs: 3_600_000 }] };
    const { echo, reload } = await serve({ "rate-limit": limit });
    expect(await echo("a")).toBe("a");
    expect(await reload({ "rate-limit": limit, audit: {} })).toEqual({ added: ["audit"], removed: [], changed: [] });
    expect(await echo("b")).toMatch(/rate limit/i);
  });

  it("refuses a reload with a mistake whole, saying what to write, and keeps what is in force", async () => {
    const { echo, reload, loaded } = await serve({ audit: {} });
    const refusal = await reload({ guard: { deny: ["s__echo"] }, "rate-limit": { callsPerMinute: 5 } }).catch((error: unknown) => error);
    expect(PluginConfigError.isInstance(refusal)).toBe(true);
    expect((refusal as Error).message).toContain(
      'plugins.rate-limit: unknown option "callsPerMinute"; the options here are enabled, priority, failClosed, timeoutMs, limits.',
    );
    expect(await echo("still")).toBe("still");
    expect(loaded.plugins.map((p) => p.name)).toEqual(["audit"]);
  });

  it("refuses to turn on a plugin that offers clients a tool, which takes a restart", async () => {
    const { reload, loaded } = await serve({});
    await expect(reload({ memory: {} })).rejects.toThrow(
      "plugins.memory: this plugin offers clients tools of its own, which a reload cannot add, take away or change; restart codemux",
    );
    expect(loaded.plugins).toEqual([]);
  });

  it("masks downstream text by the redact plugin's patterns while it is on, and not after it is turned off", async () => {
    const { loaded, reload } = await serve({});
    const secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    expect(loaded.mask.text(secret)).toBe(secret);
    await reload({ redact: { patterns: [{ name: "ticket", regex: "TICKET-[0-9]{4}" }] } });
    expect(loaded.mask.text(`${secret} TICKET-1234`)).toBe("[REDACTED:github-token] [REDACTED:ticket]");
    expect(loaded.records.text("TICKET-1234").text).toBe("[REDACTED:ticket]");
    await reload({});
    expect(loaded.mask.text("TICKET-1234")).toBe("TICKET-1234");
    // What codemux keeps of calls is masked by the built-in patterns all the same.
    expect(loaded.records.text(secret).text).toBe("[REDACTED:github-token]");
  });
});
