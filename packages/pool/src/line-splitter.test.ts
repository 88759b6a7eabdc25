import { describe, expect, it } from "vitest";
import { LineSplitter } from "./line-splitter";

describe("LineSplitter", () => {
  it("joins lines split across chunks and strips CR", () => {
    const lines: string[] = [];
    const splitter = new LineSplitter({ maxLineBytes: 100, onLine: (l) => lines.push(l) });
    splitter.push(Buffer.from("one\r\ntw"));
    splitter.push(Buffer.from("o\nthr"));
    splitter.push(Buffer.from("ee\n"));
    expect(lines).toEqual(["one", "two", "three"]);
  });

  it("drops an oversized line, reports it, and resumes at the next newline", () => {
    const lines: string[] = [];
    const oversize: number[] = [];
    const splitter = new LineSplitter({ maxLineBytes: 10, onLine: (l) => lines.push(l), onOversize: (n) => oversize.push(n) });
    splitter.push(Buffer.from("ok\n0123456789"));
    splitter.push(Buffer.from("abcdef"));
    splitter.push(Buffer.from("more\nafter\n"));
    expect(lines).toEqual(["ok", "after"]);
    expect(oversize).toEqual([16]);
  });
});
