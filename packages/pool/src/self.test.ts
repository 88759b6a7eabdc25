import { describe, expect, it } from "vitest";
import { childMarker, isCodemuxCommand, markSelf, selfSpawnReason, spawnDepth } from "./self";

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
  ])("does not mistake %s %j for codemux", (command, args) => {
    expect(isCodemuxCommand(command, args)).toBe(false);
  });

  it("recognizes the script the CLI marked as itself", () => {
    expect(isCodemuxCommand("node", ["/opt/tools/mux.mjs"])).toBe(false);
    markSelf("/opt/tools/mux.mjs");
    expect(isCodemuxCommand("node", ["/opt/tools/mux.mjs"])).toBe(true);
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
