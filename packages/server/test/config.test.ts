import { parseConfig } from "@codemux/pool";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveConfig } from "../src/index";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "codemux-config-"));
  await writeFile(join(dir, "servers.json"), JSON.stringify({ mcpServers: { a: { command: "node", args: ["a.js"] } } }));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const fallback = () => parseConfig(JSON.stringify({ mcpServers: { builtin: { command: "node" } } }), { file: "built-in default", env: {} });

describe("resolveConfig", () => {
  it("adds servers given inline to a config file's, and says so in the source", async () => {
    const config = await resolveConfig({ configPath: "servers.json", cwd: dir, env: {}, inline: ["--", "b", "--", "node", "b.js"], fallback });
    expect(config.servers.map((s) => s.name)).toEqual(["a", "b"]);
    expect(config.source).toMatch(/servers\.json \+ servers given inline$/);
  });

  it("refuses a name that is both in the file and inline, rather than drop one", async () => {
    await expect(resolveConfig({ configPath: "servers.json", cwd: dir, env: {}, inline: ["--", "a", "--", "node", "other.js"], fallback })).rejects.toThrow(
      /"a" is both in .*servers\.json and given inline/,
    );
  });

  it("serves inline servers alone without a file, and the built-in default with neither", async () => {
    expect((await resolveConfig({ cwd: dir, env: {}, inline: ["--", "b", "--", "node"], fallback })).servers.map((s) => s.name)).toEqual(["b"]);
    expect((await resolveConfig({ cwd: dir, env: {}, fallback })).servers.map((s) => s.name)).toEqual(["builtin"]);
  });
});
