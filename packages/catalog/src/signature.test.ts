import { describe, expect, it } from "vitest";
import { signatureOf, summarize } from "./signature";

describe("signatureOf", () => {
  it("renders required and optional parameters with their types", () => {
    const schema = { type: "object", properties: { path: { type: "string" }, head: { type: "number" }, tail: { type: "integer" } }, required: ["path"] };
    expect(signatureOf("readTextFile", schema)).toBe("readTextFile({ path: string, head?: number, tail?: number })");
  });

  it("renders enums, arrays, unions, refs, nullable and odd names", () => {
    const schema = {
      type: "object",
      properties: {
        mode: { enum: ["a", "b"] },
        tags: { type: "array", items: { type: "string" } },
        either: { anyOf: [{ type: "string" }, { type: "null" }] },
        ref: { $ref: "#/$defs/Thing" },
        "odd-name": { type: ["string", "null"] },
        nested: { type: "object", properties: { x: { type: "string" } } },
      },
      required: ["mode"],
      $defs: { Thing: { type: "boolean" } },
    };
    expect(signatureOf("f", schema)).toBe(
      'f({ mode: "a" | "b", tags?: string[], either?: string | null, ref?: boolean, "odd-name"?: string | null, nested?: object })',
    );
  });

  it("stays short for very wide schemas", () => {
    const properties = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`parameter_number_${i}`, { type: "string" }]));
    const signature = signatureOf("wide", { type: "object", properties });
    expect(signature.length).toBeLessThanOrEqual(200);
    expect(signature).toMatch(/, \.\.\. \}\)$/);
    expect(signatureOf("none", { type: "object" })).toBe("none()");
  });
});

describe("summarize", () => {
  it("keeps the first sentence, collapsed and bounded", () => {
    expect(summarize("Read a file.\n  Returns its   text. More.")).toBe("Read a file.");
    expect(summarize(undefined)).toBe("");
    expect(summarize("x".repeat(300), 50)).toHaveLength(50);
  });
});
