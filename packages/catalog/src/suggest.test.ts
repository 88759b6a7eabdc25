import { describe, expect, it } from "vitest";
import { closestNames, editDistance } from "./suggest";

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
