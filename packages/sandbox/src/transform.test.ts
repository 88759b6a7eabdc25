import { describe, expect, it } from "vitest";
import { stripTypes, warmUpStripTypes } from "./transform.js";

describe("stripTypes", () => {
  it("leaves Error.stackTraceLimit as it was, whether sucrase strips the code or throws", () => {
    const before = Error.stackTraceLimit;
    expect(stripTypes("const a: number = await f();\nexport default a;", "s.ts").code).toBe("const a = await f();\nexport default a;");
    expect(() => stripTypes("const broken = (;", "s.ts")).toThrow();
    expect(Error.stackTraceLimit).toBe(before);
  });

  it("makes sucrase's errors without a stack (only the message is read)", () => {
    let thrown: unknown;
    try {
      stripTypes("const broken = (;", "s.ts");
    } catch (error) {
      thrown = error;
    }
    expect(String(thrown)).toMatch(/SyntaxError: Error transforming s\.ts: Unexpected token/);
    expect((thrown as Error).stack?.split("\n")).toHaveLength(1);
  });

  it("warms up on a snippet of the usual shapes, which strips cleanly", () => {
    expect(() => warmUpStripTypes(2)).not.toThrow();
  });
});
