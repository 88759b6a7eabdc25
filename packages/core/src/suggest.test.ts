import { describe, expect, it } from "vitest";
import { closestKey, closestNames, editDistance } from "./suggest";

describe("closestNames", () => {
  it("measures edits and stops early", () => {
    expect(editDistance("read_txt_file", "read_text_file")).toBe(1);
    expect(editDistance("kitten", "sitting")).toBe(3);
    expect(editDistance("a", "abcdefgh", 2)).toBe(3);
  });

  it("orders the closest spellings first and drops far ones", () => {
    const names = ["fs__read_file", "fs__read_text_file", "fs__write_file", "github__create_issue"];
    expect(closestNames("fs__read_txt_file", names)).toEqual(["fs__read_text_file", "fs__read_file"]);
    expect(closestNames("totally_different", names)).toEqual([]);
  });
});

describe("closestKey", () => {
  it("finds the key meant by a near miss, a swapped pair or a prefix, and nothing for a different word", () => {
    const keys = ["command", "args", "env", "cwd", "disabled", "mcpServers"];
    expect(closestKey("comand", keys)).toBe("command");
    expect(closestKey("disabeld", keys)).toBe("disabled");
    expect(closestKey("mcpServer", keys)).toBe("mcpServers");
    expect(closestKey("timeout", keys)).toBeUndefined();
    expect(editDistance("ab", "ba")).toBe(1);
  });
});
