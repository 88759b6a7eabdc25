import { misbehavingEntry } from "@codemux/test-servers";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadCodemuxConfig, misspelledKeys } from "../src/config";
import { startCodemux } from "../src/start";

describe("the config, read once and checked in one place", () => {
  it("names a misspelled top-level key and what was meant, and passes a client's own keys quietly", () => {
    const raw = { mcpServers: {}, polices: {}, resultFormt: "toon", globalShortcut: "Ctrl+Space", store: "files" };
    expect(misspelledKeys(raw, "codemux.json")).toEqual([
      'codemux.json: unknown key "polices" is ignored (did you mean "policies"?).',
      'codemux.json: unknown key "resultFormt" is ignored (did you mean "resultFormat"?).',
    ]);
    // A file holding one server has that server's fields at the top: its own checks name them.
    expect(misspelledKeys({ command: "node", polices: {} }, "server.json")).toEqual([]);
  });

  it("parses every section once: the servers, the policies, and the serving-only ones only when serving", async () => {
    const dir = await mkdtemp(join(tmpdir(), "codemux-config-"));
    const file = join(dir, "codemux.json");
    await writeFile(file, JSON.stringify({ mcpServers: { m: misbehavingEntry("m") }, resultFormat: "toon", spillBytes: 1000, jobs: { maxRunMs: 60_000 } }));
    const oneShot = await loadCodemuxConfig({ configPath: file });
    expect(oneShot.servers?.servers.map((s) => s.name)).toEqual(["m"]);
    expect(oneShot).toMatchObject({ file, scan: "quarantine", resultFormat: "toon", warnings: [] });
    expect(oneShot.serving).toBeUndefined();
    expect((await loadCodemuxConfig({ configPath: file, serving: true })).serving).toEqual({ http: {}, jobs: { maxRunMs: 60_000 }, spillBytes: 1000 });
  });

  it("starts codemux on a config read once, without a command line", async () => {
    const dir = await mkdtemp(join(tmpdir(), "codemux-config-"));
    const file = join(dir, "codemux.json");
    await writeFile(file, JSON.stringify({ mcpServers: { m: misbehavingEntry("m") } }));
    const home = process.env.CODEMUX_HOME;
    process.env.CODEMUX_HOME = join(dir, "home");
    try {
      const { core } = await startCodemux(await loadCodemuxConfig({ configPath: file }), { level: "error", cache: false });
      try {
        await core.settled();
        expect(core.queries.status().map((s) => [s.name, s.state])).toEqual([["m", "ready"]]);
      } finally {
        await core.close();
      }
    } finally {
      if (home === undefined) delete process.env.CODEMUX_HOME;
      else process.env.CODEMUX_HOME = home;
    }
  }, 30_000);
});
