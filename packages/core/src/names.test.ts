import { describe, expect, it } from "vitest";
import { MAX_TOOL_NAME_LENGTH, qualifiedToolName, splitWords, toFunctionName, uniqueFunctionNames } from "./names";

describe("names", () => {
  it.each([
    ["read_text_file", "readTextFile"],
    ["API-post-page", "apiPostPage"],
    ["browser_navigate", "browserNavigate"],
    ["getHTTPStatus", "getHttpStatus"],
    ["sequentialthinking", "sequentialthinking"],
    ["delete", "delete_"],
    ["new", "new_"],
    ["3d-render", "_3dRender"],
    ["---", "tool"],
    ["index", "index_"],
    ["Schemas", "schemas_"],
  ])("%s -> %s", (tool, fn) => {
    expect(toFunctionName(tool)).toBe(fn);
  });

  it("splits identifiers into words", () => {
    expect(splitWords("API-post-page")).toEqual(["api", "post", "page"]);
    expect(splitWords("git_set_working_dir")).toEqual(["git", "set", "working", "dir"]);
    expect(splitWords("listK8sPods")).toEqual(["list", "k8s", "pods"]);
  });

  it("makes function names unique within a server", () => {
    expect(uniqueFunctionNames(["read_file", "readFile", "read-file", "delete"])).toEqual(["readFile", "readFile2", "readFile3", "delete_"]);
    expect(uniqueFunctionNames(["ReadFile", "readFile"])).toEqual(["readFile", "readFile2"]);
  });

  it("keeps qualified names within 64 characters, unique, and in the allowed alphabet", () => {
    expect(qualifiedToolName("fs", "read_text_file")).toBe("fs__read_text_file");
    expect(qualifiedToolName("x", "tool.with spaces")).toBe("x__tool_with_spaces");
    const long = "a_very_long_tool_name_that_goes_on_and_on_beyond_what_clients_accept";
    const a = qualifiedToolName("server-one", long);
    const b = qualifiedToolName("server-one", `${long}_2`);
    expect(a.length).toBeLessThanOrEqual(MAX_TOOL_NAME_LENGTH);
    expect(b.length).toBeLessThanOrEqual(MAX_TOOL_NAME_LENGTH);
    expect(a).not.toBe(b);
    expect(a.startsWith("server-one__a_very_long")).toBe(true);
    const taken = new Set(["s__t"]);
    expect(qualifiedToolName("s", "t", (n) => taken.has(n))).toMatch(/^s__t_[0-9a-z]{7}$/);
  });
});
