import { describe, expect, it } from "vitest";
import { resolveSpecifier } from "./module-path.js";

describe("resolveSpecifier", () => {
  it("keeps bare virtual specifiers, normalised", () => {
    expect(resolveSpecifier("mcp/github/index.ts", "snippet.ts")).toEqual({ ok: true, path: "mcp/github/index.ts" });
    expect(resolveSpecifier("mcp//github/./x", "snippet.ts")).toEqual({ ok: true, path: "mcp/github/x" });
  });

  it("resolves relative specifiers against the importer", () => {
    expect(resolveSpecifier("./types.ts", "mcp/github/index.ts")).toEqual({ ok: true, path: "mcp/github/types.ts" });
    expect(resolveSpecifier("../bridge", "mcp/github/index.ts")).toEqual({ ok: true, path: "mcp/bridge" });
    expect(resolveSpecifier("./helpers", "snippet.ts")).toEqual({ ok: true, path: "helpers" });
  });

  it("refuses paths that climb above the root", () => {
    expect(resolveSpecifier("../../../../etc/passwd", "snippet.ts").ok).toBe(false);
    expect(resolveSpecifier("../../x", "mcp/index.ts").ok).toBe(false);
    expect(resolveSpecifier("mcp/../../etc/passwd", "snippet.ts").ok).toBe(false);
  });

  it("refuses absolute paths, URLs and node built-ins", () => {
    for (const specifier of ["/etc/passwd", "node:fs", "file:///etc/passwd", "https://example.com/x.js", "data:text/javascript,1"]) {
      expect(resolveSpecifier(specifier, "snippet.ts").ok, specifier).toBe(false);
    }
  });
});
