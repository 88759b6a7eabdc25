import { describe, expect, it } from "vitest";
import { OutputBuffer } from "./output-buffer.js";

describe("OutputBuffer", () => {
  it("keeps output under the limit as written", () => {
    const buffer = new OutputBuffer(16);
    expect(buffer.write("hello\n")).toBe(10);
    expect(buffer.text()).toBe("hello\n");
    expect(buffer.truncated).toBe(false);
  });

  it("cuts at the byte limit, marks the cut and drops later writes", () => {
    const buffer = new OutputBuffer(8);
    buffer.write("12345");
    expect(buffer.write("67890")).toBe(0);
    buffer.write("more");
    expect(buffer.truncated).toBe(true);
    expect(buffer.text()).toBe("12345678\n[output truncated at 8 bytes]");
  });

  it("never splits a multi-byte character", () => {
    const buffer = new OutputBuffer(5);
    buffer.write("ab€€");
    expect(buffer.text()).toBe("ab€\n[output truncated at 5 bytes]");
  });

  it("names the limit in MiB", () => {
    const buffer = new OutputBuffer(1024 * 1024);
    buffer.write("x".repeat(1024 * 1024 + 1));
    expect(buffer.text().endsWith("\n[output truncated at 1 MiB]")).toBe(true);
  });
});
