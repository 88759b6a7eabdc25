import { PluginConfigError } from "../src/index";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadPlugins, type LoadedPlugins } from "../src/index";
import { recordingLogger, tempDir } from "./helpers";

let loaded: LoadedPlugins | undefined;
afterEach(async () => {
  await loaded?.close();
  loaded = undefined;
});

async function load(plugins: unknown, configDir = tempDir()) {
  loaded = await loadPlugins({
    config: { mcpServers: {}, plugins },
    configFile: join(configDir, "codemux.json"),
    dataDir: configDir,
    logger: recordingLogger(),
  });
  return loaded;
}

async function failure(plugins: unknown, configDir = tempDir()): Promise<string> {
  try {
    await load(plugins, configDir);
  } catch (error) {
    expect(PluginConfigError.isInstance(error)).toBe(true);
    return (error as Error).message.replace(join(configDir, "codemux.json"), "codemux.json");
  }
  throw new Error("expected a config error");
}

describe("loadPlugins", () => {
  it("makes no plugins, and a middleware that passes calls on, without a plugins section", async () => {
    const plugins = await loadPlugins({ config: { mcpServers: {} } });
    expect(plugins.plugins).toEqual([]);
    loaded = plugins;
  });

  it("enables built-ins by name, in priority order, with the config's overrides", async () => {
    const plugins = await load({
      cache: { ttlMs: 1000 },
      audit: {},
      redact: true,
      "rate-limit": { priority: 5, limits: [{ by: ["tool"], calls: 1, perMs: 1000 }] },
      guard: false,
      pin: { enabled: false },
    });
    expect(plugins.plugins.map((p) => `${p.name}:${p.priority}`)).toEqual(["audit:1000", "redact:200", "cache:100", "rate-limit:5"]);
  });

  it.each([
    [{ cache: { ttlMs: "60s" } }, "Invalid config codemux.json: plugins.cache.ttlMs: expected number, received string"],
    [
      { cache: { ttl: 5 } },
      'Invalid config codemux.json: plugins.cache: unknown option "ttl" (did you mean "ttlMs"?); the options here are enabled, priority, failClosed, timeoutMs, ttlMs, maxBytes, maxEntryBytes, readOnly, tools, exclude, perPrincipal',
    ],
    [
      { "rate-limit": { callsPerMinute: 60 } },
      'Invalid config codemux.json: plugins.rate-limit: unknown option "callsPerMinute"; the options here are enabled, priority, failClosed, timeoutMs, limits. A limit of 60 calls a minute for each principal is "limits": [{ "by": ["principal"], "calls": 60, "perMs": 60000 }]',
    ],
    [
      { "rate-limit": { limits: [{ by: ["tool"], call: 1, perMs: 1 }] } },
      'Invalid config codemux.json: plugins.rate-limit.limits.0: unknown option "call" (did you mean "calls"?); the options here are by, calls, perMs, burst, tools',
    ],
    [
      { redact: { patterns: [{ name: "a", regex: "x", flag: "i" }] } },
      'Invalid config codemux.json: plugins.redact.patterns.0: unknown option "flag" (did you mean "flags"?); the options here are name, regex, flags, group',
    ],
    [
      { mine: { module: "./mine.mjs", option: {} } },
      'Invalid config codemux.json: plugins.mine: unknown option "option" (did you mean "options"?); the options here are enabled, priority, failClosed, timeoutMs, module, options',
    ],
    [
      { cahce: {} },
      'Invalid config codemux.json: plugins.cahce: not a built-in plugin (did you mean "cache"?); built-ins are audit, cache, rate-limit, redact, guard, pin, summarize, memory, and a plugin of your own needs "module": "./my-plugin.js"',
    ],
    [{ "rate-limit": { limits: [{ by: ["user"], calls: 1, perMs: 1 }] } }, "Invalid config codemux.json: plugins.rate-limit.limits.0.by.0:"],
    [
      { redact: { patterns: [{ name: "bad", regex: "(unclosed" }] } },
      "Invalid config codemux.json: plugins.redact.patterns.0.regex: not a valid regular expression",
    ],
    [{ mine: { module: "./missing.mjs" } }, 'Invalid config codemux.json: plugins.mine.module: cannot load "./missing.mjs" (no file at'],
    [{ mine: { module: "some-package" } }, 'Invalid config codemux.json: plugins.mine.module: "some-package" must be a path to a file'],
    [[{ use: "audit" }], "Invalid config codemux.json: plugins: expected an object whose keys are plugin names"],
  ])("refuses %j with an error naming the field", async (plugins, message) => {
    expect(await failure(plugins)).toContain(message);
  });

  it("loads a local module relative to the config file's folder, giving it its options", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "plugins"));
    writeFileSync(
      join(dir, "plugins", "tag.mjs"),
      `export default (options) => ({ name: "tag", afterCall: (call, result) => ({ ...result, content: [...result.content, { type: "text", text: options.tag + " " + call.name }] }) });\n`,
    );
    const plugins = await load({ tagger: { module: "./plugins/tag.mjs", options: { tag: "seen" }, priority: 7, failClosed: true } }, dir);
    const [plugin] = plugins.plugins;
    expect([plugin!.name, plugin!.priority, plugin!.failClosed]).toEqual(["tag", 7, true]);
    const result = await plugin!.afterCall!({ name: "a__b" } as never, { content: [] });
    expect(result).toEqual({ content: [{ type: "text", text: "seen a__b" }] });
  });

  it("names a module whose export is not a plugin", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "bad.mjs"), "export default 42;\n");
    expect(await failure({ bad: { module: "./bad.mjs" } }, dir)).toContain('plugins.bad.module: "./bad.mjs" must export a plugin object');
  });

  it("stops start-up naming a plugin whose init fails", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "boom.mjs"), 'export default { name: "boom", init() { throw new Error("no database"); } };\n');
    expect(await failure({ boom: { module: "./boom.mjs" } }, dir)).toContain('plugins: Plugin "boom" could not start: no database');
  });
});
