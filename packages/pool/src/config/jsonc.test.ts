import { describe, expect, it } from "vitest";
import { ConfigError } from "../errors";
import { parseJsonc, stripJsonComments } from "./jsonc";

const syntaxError = (text: string): string => {
  try {
    parseJsonc(text, "mcp.json");
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error("expected a ConfigError");
};

describe("parseJsonc", () => {
  it("reads VS Code's JSONC: line and block comments, trailing commas before } and ], a BOM, and // inside strings left alone", () => {
    const text = [
      "\uFEFF{",
      "  // the servers",
      '  "servers": {',
      '    "web": { "url": "https://x.dev/mcp", /* not a comment: "//" above is in a string */ },',
      '    "fs": { "command": "npx", "args": ["-y", "fs",], },',
      "  }, // trailing",
      "}",
    ].join("\n");
    expect(parseJsonc(text, "mcp.json")).toEqual({
      value: { servers: { web: { url: "https://x.dev/mcp" }, fs: { command: "npx", args: ["-y", "fs"] } } },
      comments: true,
    });
    expect(parseJsonc('{"a": [1, 2]}', "plain.json")).toEqual({ value: { a: [1, 2] }, comments: false });
  });

  it("keeps every character's line and column when it blanks comments and a trailing comma behind one", () => {
    const text = '{"a": 1, // one\n/* two\n */ }';
    const { text: plain } = stripJsonComments(text);
    expect(plain).toBe(`{"a": 1${" ".repeat(8)}\n${" ".repeat(6)}\n    }`);
    expect(plain).toHaveLength(text.length);
  });

  it.each([
    ['{\n  "a": 1\n  "b": 2\n}', "line 3, column 3", 'expected "," or "}" after a value'],
    ['{\n  "a": tru\n}', "line 2, column 8", "expected a value"],
    ['{\n  "a": 1,\n  b: 2\n}', "line 3, column 3", "expected a property name in double quotes"],
    ["{\n  'a': 1\n}", "line 2, column 3", "double quotes, not single ones"],
    ['{"a": [1, 2}', "line 1, column 12", 'expected "," or "]" after a value, found "}"'],
    ['{"a": [1,,2]}', "line 1, column 10", 'expected a value, found ","'],
    ['{,"a": 1}', "line 1, column 2", 'expected a property name in double quotes or "}", found ","'],
    ['{"a": 1}\n{"b": 2}', "line 2, column 1", "expected the end of the file after the top-level value"],
    ['{"a": "x\ny"}', "line 1, column 9", "a string is not closed before the end of its line"],
    ['{"a": "\\q"}', "line 1, column 8", "invalid \\ escape"],
    ['{"a": 1 /* open', "line 1, column 9", "a /* comment is never closed"],
    ['{\n  "a": [1, 2\n', "line 3, column 1", "the file ends before the JSON does"],
  ])("points a syntax error in %j at %s", (text, position, words) => {
    const message = syntaxError(text);
    expect(message).toContain(`Invalid config mcp.json: JSON syntax error at ${position}: `);
    expect(message).toContain(words);
  });

  it("never quotes the file's text in a syntax error, where V8's own message would", () => {
    const text = '{\n  "servers": {"gh": {"command": "gh", "env": {"GITHUB_TOKEN": ghp_s3cr3t}}}\n}';
    expect(() => JSON.parse(text)).toThrow(/ghp_s3cr3t/);
    expect(syntaxError(text)).toBe(
      "Invalid config mcp.json: JSON syntax error at line 2, column 63: expected a value: a string in double quotes, a number, true, false, null, an object or an array.",
    );
  });

  it("gives the empty value to a file of blanks and comments only when the caller has one", () => {
    expect(parseJsonc(" // nothing yet\n", "mcp.json", { empty: {} })).toEqual({ value: {}, comments: true });
    expect(syntaxError(" // nothing yet\n")).toContain("the file holds no JSON value");
  });

  it("reads hostile nesting with its own stack: a million open brackets are an error, not a stack overflow", () => {
    expect(syntaxError("[".repeat(1_000_000))).toContain("line 1, column 1000001: the file ends before the JSON does");
    expect(parseJsonc(`${"[".repeat(100_000)}${"]".repeat(100_000)}`, "deep.json").comments).toBe(false);
  });
});
