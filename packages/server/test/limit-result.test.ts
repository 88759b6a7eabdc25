import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { Codemux, MemoryStore } from "../src/index";
import { CODE_HINTS } from "../src/render/hints";
import { keepIfLarge, limitResult } from "../src/render/limit-result";
import { estimateTokens } from "@codemux/core";
import { config, servicesOf } from "./helpers";

const core = new Codemux({ config: config({}), largeResultBytes: 1000, resultStore: new MemoryStore() });
const limit = (result: CallToolResult) => limitResult(core.servicesFor(CODE_HINTS), { tool: "t__x", result, owner: { id: "me", principal: "local" } });

/** Structured content that counts how often it is stringified. */
function counted(value: Record<string, unknown>): { structured: Record<string, unknown>; times: () => number } {
  let times = 0;
  return { structured: { ...value, toJSON: () => (times++, value) } as Record<string, unknown>, times: () => times };
}

describe("limitResult measures a result once", () => {
  it("gives the UTF-8 bytes and tokens of the text parts and structured content as if joined by newlines", async () => {
    const structured = { name: "çà et là", list: [1, 2, 3], emoji: "🦊" };
    const result = await limit({
      content: [
        { type: "text", text: "première" },
        { type: "image", data: "aGk=", mimeType: "image/png" },
        { type: "text", text: "🦊 two" },
      ],
      structuredContent: structured,
    });
    const joined = ["première", "🦊 two", JSON.stringify(structured)].join("\n");
    expect(result._meta).toMatchObject({ "codemux/bytes": Buffer.byteLength(joined, "utf8"), "codemux/estimatedTokens": estimateTokens(joined) });
  });

  it("answers a result small enough to go as it is without a promise, and a kept one through one", async () => {
    const small = limit({ content: [{ type: "text", text: "hi" }] });
    expect(small).not.toBeInstanceOf(Promise);
    expect(small).toMatchObject({ content: [{ type: "text", text: "hi" }], _meta: { "codemux/bytes": 2 } });
    const kept = limit({ content: [{ type: "text", text: "x".repeat(2000) }] });
    expect(kept).toBeInstanceOf(Promise);
    expect(JSON.stringify(await kept)).toContain("too large to show whole");
  });

  it("keepIfLarge answers a result it cannot measure with a rejected promise, not a throw", async () => {
    const broken = Object.defineProperty({}, "content", {
      get() {
        throw new Error("unreadable");
      },
    }) as CallToolResult;
    const limited = keepIfLarge(core.servicesFor(CODE_HINTS), { tool: "t__x", result: broken, owner: { id: "me", principal: "local" } });
    await expect(limited).rejects.toThrow("unreadable");
  });

  it("stringifies structured content once, for its size and its measure alike", async () => {
    const small = counted({ a: 1 });
    await limit({ content: [], structuredContent: small.structured });
    expect(small.times()).toBe(1);
  });

  it("stringifies it once too when the result is kept, and keeps it", async () => {
    const big = counted({ rows: Array.from({ length: 200 }, (_, i) => ({ i, text: "some words" })) });
    const result = await limit({ content: [], structuredContent: big.structured });
    expect(result.content[0]).toMatchObject({ type: "text", text: expect.stringMatching(/too large to show whole/) });
    // Once to measure; the kept text is laid out a member a line (its own walk, not a stringify).
    expect(big.times()).toBe(1);
  });
});

describe("a kept result", () => {
  it("keeps a snippet's multi-line text value as its lines, so that grep finds every matching line", async () => {
    const lines = Array.from({ length: 6 }, (_, i) => `line ${i}: ${i % 2 ? "MATCH" : "other"} "quoted" ${"x".repeat(300)}`);
    const result = await limit({ content: [{ type: "text", text: JSON.stringify({ result: lines.join("\n"), stdout: "" }) }] });
    const id = /res_[0-9a-f]+/.exec(JSON.stringify(result))?.[0];
    expect(id).toBeDefined();
    const kept = await servicesOf(core).results.read(id as string, "me");
    const keptLines = kept.split("\n");
    for (const line of lines) expect(keptLines).toContain(line);
    expect(keptLines.filter((l) => l.includes("MATCH"))).toHaveLength(3);
    expect(result.content[0]).toMatchObject({ text: expect.stringContaining("result") });
  });
});
