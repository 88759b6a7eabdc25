import { describe, expect, it } from "vitest";
import { LineSplitter } from "./framing";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("LineSplitter", () => {
  it("joins lines split across chunks and strips CR", () => {
    const lines: string[] = [];
    const splitter = new LineSplitter({ maxLineBytes: 100, onLine: (l) => lines.push(l) });
    splitter.push(bytes("one\r\ntw"));
    splitter.push(bytes("o\nthr"));
    splitter.push(bytes("ee\n"));
    expect(lines).toEqual(["one", "two", "three"]);
  });

  it("drops an oversized line, reports it, and resumes at the next newline", () => {
    const lines: string[] = [];
    const oversize: number[] = [];
    const splitter = new LineSplitter({ maxLineBytes: 10, onLine: (l) => lines.push(l), onOversize: (n) => oversize.push(n) });
    splitter.push(bytes("ok\n0123456789"));
    splitter.push(bytes("abcdef"));
    splitter.push(bytes("more\nafter\n"));
    expect(lines).toEqual(["ok", "after"]);
    expect(oversize).toEqual([16]);
  });

  it("decodes UTF-8 split inside a character, keeps a BOM and replaces bad bytes, as Buffer#toString does", () => {
    const lines: string[] = [];
    const splitter = new LineSplitter({ maxLineBytes: 100, onLine: (l) => lines.push(l) });
    const text = bytes("\ufeffé€😀\n");
    for (let i = 0; i < text.length; i++) splitter.push(text.subarray(i, i + 1));
    splitter.push(Uint8Array.of(0xff, 0x61, 10));
    expect(lines).toEqual([Buffer.from(text.subarray(0, -1)).toString("utf8"), Buffer.from([0xff, 0x61]).toString("utf8")]);
    expect(lines[0]).toBe("\ufeffé€😀");
  });
});
