import { estimateTokens } from "@codemux/core";
import { afterEach, describe, expect, it } from "vitest";
import { MemoryStore, toonText } from "../src/index";
import { MAX_TOON_INPUT_CHARS } from "../src/render/toon";
import { config, connect, misbehaving, textOf, type Harness } from "./helpers";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const rows = [
  { name: "a.txt", size: 10, type: "file" },
  { name: "docs", size: 0, type: "directory" },
];

describe("resultFormat toon", () => {
  it("answers a tool's JSON table as TOON, with its size in _meta; plain text, scalars and what TOON would not shorten stay as they are", async () => {
    h = await connect({ config: config({ m: misbehaving() }), resultFormat: "toon", resultStore: new MemoryStore() });
    const table = await h.call("call_tool", { name: "m__echo", args: { text: JSON.stringify(rows) } });
    expect(textOf(table)).toBe("[2]{name,size,type}:\n  a.txt,10,file\n  docs,0,directory");
    expect(table._meta).toMatchObject({ "codemux/bytes": textOf(table).length, "codemux/estimatedTokens": estimateTokens(textOf(table)) });
    for (const text of ["hello, world", "42", "[1,2]", "{not json"]) expect(await h.text("call_tool", { name: "m__echo", args: { text } })).toBe(text);
  });

  it("answers a snippet's value as TOON, and gives the answer's own size for the TOON text", async () => {
    h = await connect({ config: config({ m: misbehaving() }), resultFormat: "toon", resultStore: new MemoryStore() });
    const text = await h.text("execute_code", { code: `export default ${JSON.stringify(rows)};` });
    const [body, last] = [text.slice(0, text.lastIndexOf("\n")), text.slice(text.lastIndexOf("\n") + 1)];
    expect(body).toBe("result[2]{name,size,type}:\n  a.txt,10,file\n  docs,0,directory\ndurationMs: " + /durationMs: (\d+)/.exec(text)?.[1] + "\ntoolCalls: 0");
    expect(last).toBe(`estimatedTokens: ${estimateTokens(body) + 5}`);
  });

  it("is off by default: the same table comes back as the tool gave it", async () => {
    h = await connect({ config: config({ m: misbehaving() }), resultStore: new MemoryStore() });
    expect(await h.text("call_tool", { name: "m__echo", args: { text: JSON.stringify(rows) } })).toBe(JSON.stringify(rows));
  });

  it("answers compact JSON where TOON would not be clearly shorter (lists of objects holding lists), still shorter than pretty-printed JSON", () => {
    const graph = { entities: [0, 1, 2].map((i) => ({ name: `s-${i}`, observations: [`team ${i}`, `eu-${i}`] })), relations: [] };
    expect(toonText(JSON.stringify(graph, null, 2))).toBe(JSON.stringify(graph));
    expect(toonText(JSON.stringify(graph))).toBeUndefined();
  });

  it("leaves JSON larger than its input bound as it is (encoding is linear, but bounded first)", () => {
    const many = JSON.stringify(Array.from({ length: 12_000 }, (_, i) => ({ id: i, name: `row ${i}` })));
    expect(many.length).toBeGreaterThan(MAX_TOON_INPUT_CHARS);
    expect(toonText(many)).toBeUndefined();
    expect(toonText(many.slice(0, many.indexOf("},{", 100_000) + 1) + "]")).toMatch(/^\[\d+\]\{id,name\}:/);
  });
});
