import { describe, expect, it } from "vitest";
import { backoffDelay } from "./backoff";
import { childEnvironment } from "./environment";
import { StderrRing } from "./stderr-ring";
import { createToolFilter } from "./tool-filter";

describe("childEnvironment", () => {
  const parent = {
    PATH: "/bin",
    HOME: "/home/u",
    AWS_SECRET_ACCESS_KEY: "s3cr3t",
    Path: "C:\\bin",
    PATHEXT: ".EXE;.CMD",
    ComSpec: "cmd.exe",
    SystemRoot: "C:\\Windows",
    GITHUB_TOKEN: "t",
  };

  it("passes PATH and HOME but not secrets on POSIX, and adds the server's env", () => {
    expect(childEnvironment({ X: "1" }, parent, "linux")).toEqual({ PATH: "/bin", HOME: "/home/u", X: "1" });
  });

  it("passes PATHEXT, COMSPEC and SYSTEMROOT on Windows whatever their case", () => {
    const env = childEnvironment({}, parent, "win32");
    expect(env).toMatchObject({ Path: "C:\\bin", PATHEXT: ".EXE;.CMD", ComSpec: "cmd.exe", SystemRoot: "C:\\Windows" });
    expect(env).not.toHaveProperty("GITHUB_TOKEN");
  });

  it("lets configured env override inherited values", () => {
    expect(childEnvironment({ PATH: "/opt/bin" }, parent, "linux").PATH).toBe("/opt/bin");
  });
});

describe("createToolFilter", () => {
  it("applies allow then deny with * wildcards", () => {
    const allowed = createToolFilter({ allow: ["read_*", "list_directory"], deny: ["read_media_file"] });
    expect(["read_text_file", "read_media_file", "list_directory", "write_file"].filter(allowed)).toEqual(["read_text_file", "list_directory"]);
    expect(createToolFilter({})("anything")).toBe(true);
    expect(createToolFilter({ allow: ["a.b"] })("axb")).toBe(false);
  });
});

describe("StderrRing", () => {
  it("keeps the last complete lines and the unterminated one within bounds, joining split chunks", () => {
    const ring = new StderrRing(3, 10);
    ring.push("one\ntw");
    ring.push("o\nthree\nfour\n");
    ring.push("a very long unterminated line");
    expect(ring.tail(10)).toEqual(["two", "three", "four", "a very lon"]);
    expect(ring.tail(2)).toEqual(["four", "a very lon"]);
  });
});

describe("StderrRing.telling", () => {
  const ring = (text: string) => {
    const r = new StderrRing();
    r.push(text);
    return r;
  };

  it("picks Node's error line, not the stack frames and version banner after it", () => {
    const node = [
      "node:internal/modules/cjs/loader:1210",
      "  throw err;",
      "  ^",
      "",
      "Error: Cannot find module '/nonexistent.js'",
      "    at Module._resolveFilename (node:internal/modules/cjs/loader:1207:15)",
      "    at node:internal/main/run_main_module:28:49 {",
      "  code: 'MODULE_NOT_FOUND',",
      "  requireStack: []",
      "}",
      "",
      "Node.js v20.20.2",
      "",
    ].join("\n");
    expect(ring(node).telling(5)).toEqual(["Error: Cannot find module '/nonexistent.js'"]);
    expect(
      ring("Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'x' imported from /a.mjs\n    at packageResolve (x:1:1)\nNode.js v20.20.2\n").telling(),
    ).toEqual(["Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'x' imported from /a.mjs"]);
  });

  it("picks Python's last line, and the start of npm's run of error lines", () => {
    expect(ring("Traceback (most recent call last):\n  File \"<string>\", line 1\nModuleNotFoundError: No module named 'mcp'\n").telling()).toEqual([
      "ModuleNotFoundError: No module named 'mcp'",
    ]);
    const npm = [
      "npm error code E404",
      "npm error 404 Not Found - GET https://registry.npmjs.org/nope",
      "npm error 404",
      "npm error 404 Note that you can also install from a",
      "npm error A complete log of this run can be found in: /root/.npm/_logs/x.log",
    ].join("\n");
    expect(ring(npm).telling()).toEqual(["npm error code E404", "npm error 404 Not Found - GET https://registry.npmjs.org/nope"]);
  });

  it("gives the last lines when none states an error, and ignores lines that only mention one", () => {
    expect(ring("starting\nError handling is on\nlistening on stdio\n").telling(2)).toEqual(["Error handling is on", "listening on stdio"]);
  });
});

describe("backoffDelay", () => {
  it("grows exponentially and is capped", () => {
    const mid = () => 0.5;
    expect([1, 2, 3, 4, 10].map((n) => backoffDelay(n, { initialMs: 100, maxMs: 1000 }, mid))).toEqual([100, 200, 400, 800, 1000]);
  });
});
