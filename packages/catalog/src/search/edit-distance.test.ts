import { describe, expect, it } from "vitest";
import { withinOneEdit } from "./edit-distance";

describe("withinOneEdit", () => {
  it.each([
    ["screenshot", "screenshot"],
    ["screnshot", "screenshot"],
    ["screenshots", "screenshot"],
    ["screemshot", "screenshot"],
    ["scerenshot", "screenshot"],
  ])("accepts %s for %s", (a, b) => {
    expect(withinOneEdit(a, b)).toBe(true);
    expect(withinOneEdit(b, a)).toBe(true);
  });

  it.each([
    ["scrnshot", "screenshot"],
    ["screenshot", "screenshoot!"],
    ["abcd", "badc"],
  ])("rejects %s for %s", (a, b) => {
    expect(withinOneEdit(a, b)).toBe(false);
  });
});
