import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { childMarker, isCodemuxCommand, markSelf, selfSpawnReason, spawnDepth } from "./self";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe("isCodemuxCommand", () => {
  it.each([
    ["codemux", []],
    ["/usr/local/bin/codemux", ["serve"]],
    ["codemux.cmd", []],
    ["npx", ["codemux"]],
    ["npx", ["-y", "codemux", "--config", "x.json"]],
    ["npx", ["-y", "codemux@latest"]],
    ["pnpm", ["dlx", "codemux"]],
    ["npm", ["exec", "codemux"]],
    ["node", ["/home/u/codemux/apps/cli/dist/index.js", "--config", "c.json"]],
    ["node", ["/proj/node_modules/codemux/dist/index.js"]],
    ["sh", ["-c", "exec npx -y codemux"]],
    ["bash", ["-lc", "cd /x && codemux serve"]],
  ])("recognizes %s %j as codemux", (command, args) => {
    expect(isCodemuxCommand(command, args)).toBe(true);
  });

  it.each([
    ["npx", ["-y", "@modelcontextprotocol/server-filesystem", "/tmp/codemux"]],
    ["node", ["server.js", "codemux"]],
    ["uvx", ["mcp-server-git"]],
    ["sh", ["-c", "npx -y server-memory"]],
    ["npx", ["codemux-helper"]],
    // A global install's own dependencies: the built-in default starts these by their path under codemux's folder.
    ["/usr/bin/node", ["/usr/local/lib/node_modules/codemux/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", "/data"]],
    ["node", ["/home/u/.npm/_npx/1a2b/node_modules/codemux/node_modules/@modelcontextprotocol/server-memory/dist/index.js"]],
    ["/proj/node_modules/codemux/node_modules/.bin/mcp-server-filesystem", ["/data"]],
  ])("does not mistake %s %j for codemux", (command, args) => {
    expect(isCodemuxCommand(command, args)).toBe(false);
  });

  it("recognizes the script the CLI marked as itself", () => {
    expect(isCodemuxCommand("node", ["/opt/tools/mux.mjs"])).toBe(false);
    markSelf("/opt/tools/mux.mjs");
    expect(isCodemuxCommand("node", ["/opt/tools/mux.mjs"])).toBe(true);
  });

  it("recognizes its own entry file through a link, either way round, and nothing else in its folder", () => {
    const dir = mkdtempSync(join(tmpdir(), "codemux-self-"));
    dirs.push(dir);
    // As npm links a global install: bin/NAME -> lib/node_modules/PKG/dist/main.js (names codemux's patterns do not know).
    mkdirSync(join(dir, "lib", "tool", "dist"), { recursive: true });
    mkdirSync(join(dir, "bin"));
    const entry = join(dir, "lib", "tool", "dist", "main.js");
    const sibling = join(dir, "lib", "tool", "dist", "server.js");
    writeFileSync(entry, "");
    writeFileSync(sibling, "");
    symlinkSync(entry, join(dir, "bin", "mux"));
    symlinkSync(entry, join(dir, "bin", "mux2"));
    expect(isCodemuxCommand("node", [entry])).toBe(false);
    markSelf(join(dir, "bin", "mux"));
    expect(isCodemuxCommand("node", [entry])).toBe(true);
    expect(isCodemuxCommand(join(dir, "bin", "mux2"), [])).toBe(true);
    expect(isCodemuxCommand("node", [sibling])).toBe(false);
  });
});

describe("the nesting marker", () => {
  it("counts depth and refuses stdio servers two levels deep", () => {
    expect(spawnDepth({})).toBe(0);
    expect(childMarker({})).toEqual({ CODEMUX_DEPTH: "1" });
    expect(childMarker({ CODEMUX_DEPTH: "1" })).toEqual({ CODEMUX_DEPTH: "2" });
    const spec = { type: "stdio" as const, command: "node", args: ["server.js"], env: {} };
    expect(selfSpawnReason(spec, { CODEMUX_DEPTH: "1" })).toBeUndefined();
    expect(selfSpawnReason(spec, { CODEMUX_DEPTH: "2" })).toMatch(/2 levels deep inside codemux \(CODEMUX_DEPTH=2\)/);
  });
});
