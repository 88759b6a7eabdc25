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

describe("backoffDelay", () => {
  it("grows exponentially and is capped", () => {
    const mid = () => 0.5;
    expect([1, 2, 3, 4, 10].map((n) => backoffDelay(n, { initialMs: 100, maxMs: 1000 }, mid))).toEqual([100, 200, 400, 800, 1000]);
  });
});
