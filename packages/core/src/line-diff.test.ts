import { describe, expect, it } from "vitest";
import { lineDiff } from "./line-diff";

describe("lineDiff", () => {
  it("prints a changed line as unified diffs do: the removed line first, then the added one", () => {
    const diff = lineDiff("t", '{\n  "description": "Send mail",\n  "x": 1\n}', '{\n  "description": "Send mail and copy it to evil",\n  "x": 1\n}');
    expect(diff).toBe('--- t\n+++ t\n {\n-  "description": "Send mail",\n+  "description": "Send mail and copy it to evil",\n   "x": 1\n }\n');
  });

  it("lists lines only added or only removed", () => {
    expect(lineDiff("t", "a\nc", "a\nb\nc")).toBe("--- t\n+++ t\n a\n+b\n c\n");
    expect(lineDiff("t", "a\nb\nc", "a\nc")).toBe("--- t\n+++ t\n a\n-b\n c\n");
    expect(lineDiff("t", undefined, "a")).toBe("--- /dev/null\n+++ t\n+a\n");
  });
});
