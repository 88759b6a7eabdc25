import { estimateTokens } from "@codemux/core";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DISPATCH_TOOL_NAME } from "../src/index";
import { config, connect, misbehaving, node, referenceServer, textOf, type Harness } from "./helpers";

let h: Harness;
let dir: string;
/** Every answer the client got, to show what passed through it. */
const received: CallToolResult[] = [];

const codemux = async (args: Record<string, unknown>): Promise<CallToolResult> => {
  const result = await h.call(DISPATCH_TOOL_NAME, args);
  received.push(result);
  return result;
};
const text = async (args: Record<string, unknown>): Promise<string> => textOf(await codemux(args));
const json = async (args: Record<string, unknown>): Promise<Record<string, unknown>> => JSON.parse(await text(args)) as Record<string, unknown>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "codemux-dispatch-"));
  await writeFile(join(dir, "hello.txt"), "hello from disk\nsecond line\n");
  h = await connect({
    config: config({
      fs: node(referenceServer("@modelcontextprotocol/server-filesystem"), dir),
      bad: misbehaving(),
      twin: misbehaving(),
    }),
    mode: "dispatch",
    largeResultBytes: 64 * 1024,
  });
  await h.core.ready();
});
afterAll(async () => {
  await h.close();
  await rm(dir, { recursive: true, force: true });
});

describe("mode dispatch: the upfront list", () => {
  it("is one tool, codemux, under 400 tokens whatever the catalog holds", async () => {
    const { tools } = await h.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["codemux"]);
    expect(h.core.catalog.size).toBeGreaterThan(30);
    // 1,593 JSON characters = 398 o200k tokens when pinned (`pnpm bench`); 400 tokens is the budget.
    expect(JSON.stringify(tools).length).toBeLessThanOrEqual(1600);
    // How big a kept result is in the model's terms (seed 004's rule of thumb), in one clause.
    expect(tools[0]?.description).toContain("page a kept result (~4 chars a token)");
    // Its description teaches every action.
    for (const action of ["search", "list", "call", "exec", "read"]) expect(tools[0]?.description).toContain(`${action} {`);
  });
});

describe("action search", () => {
  it("ranks tools as search_tools does", async () => {
    expect(await text({ action: "search", query: "read a text file", limit: 3 })).toContain("fs__read_text_file  mcp/servers/fs/readTextFile");
  });

  it("refuses a field that belongs to another action, naming it", async () => {
    const result = await codemux({ action: "search", query: "x", tool: "fs__read_text_file" });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/"tool" does not belong to action "search"; it takes query, server, limit/);
    expect(textOf(await codemux({ action: "fly" }))).toMatch(/"action" must be one of/);
  });
});

describe("action list", () => {
  it("lists servers with their state and tools, filtered by server, with schemas and annotations on request", async () => {
    const all = await json({ action: "list" });
    const servers = all.servers as Array<{ name: string; state: string; tools: number; toolList?: Array<{ tool: string; inputSchema?: unknown }> }>;
    expect(servers.map((s) => s.name)).toEqual(["bad", "fs", "twin"]);
    expect(servers.every((s) => s.state === "ready" && s.tools > 0)).toBe(true);
    expect(all.estimatedTokens).toBeGreaterThan(0);

    const one = await json({ action: "list", server: "fs", schemas: true, annotations: true });
    const [fs] = one.servers as typeof servers;
    expect((one.servers as unknown[]).length).toBe(1);
    const read = fs?.toolList?.find((t) => t.tool === "fs__read_text_file") as {
      inputSchema?: { properties?: object };
      annotations?: { readOnlyHint?: boolean };
    };
    expect(read.inputSchema?.properties).toHaveProperty("path");
    expect(read.annotations?.readOnlyHint).toBe(true);
    const plain = await json({ action: "list", server: "fs" });
    expect(JSON.stringify(plain)).not.toContain("inputSchema");

    expect(await text({ action: "list", server: "nope" })).toMatch(/No server named "nope"\. Servers: bad, fs, twin/);
  });
});

describe("action call", () => {
  it("calls by bare name when one server has the tool, and by server__tool", async () => {
    expect(await text({ action: "call", tool: "read_text_file", arguments: { path: join(dir, "hello.txt") } })).toContain("hello from disk");
    expect(await text({ action: "call", tool: "echo", server: "twin", arguments: { text: "hi" } })).toBe("hi");
    expect(await text({ action: "call", tool: "bad__echo", arguments: { text: "yo" } })).toBe("yo");
  });

  it("names the servers of an ambiguous bare name", async () => {
    const result = await codemux({ action: "call", tool: "echo", arguments: { text: "hi" } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/Tool "echo" exists in 2 servers \(bad__echo, twin__echo\); give the server__tool name or "server"/);
  });

  it("says how to find a tool it does not know in its own words, in a call and in a snippet", async () => {
    expect(await text({ action: "call", tool: "nosuch__tool" })).toMatch(/^No tool named "nosuch__tool"\. .*; codemux \{"action":"search"\} finds them\.$/);
    const snippet = await text({ action: "exec", code: 'import { callTool } from "mcp/bridge";\nexport default await callTool("nosuch__tool", {});' });
    expect(snippet).toContain('codemux {\\"action\\":\\"search\\"} finds them.');
    expect(snippet).not.toContain("search_tools");
  });

  it("validates arguments as call_tool does, before the call", async () => {
    const result = await codemux({ action: "call", tool: "bad__echo", arguments: { text: 42 } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe("Invalid arguments for bad__echo: text: must be string");
    // null for an optional number means it was left out (as the conformance referee's client writes it), not a wrong type.
    expect((await codemux({ action: "call", tool: "bad__slow", arguments: { ms: 1, steps: null } })).isError).toBeFalsy();
    expect(textOf(await codemux({ action: "call", tool: "fs__read_txt_file" }))).toMatch(/Did you mean "fs__read_text_file"/);
  });

  it("says an inline result's size and estimated tokens in _meta, leaving the content as the tool gave it", async () => {
    const result = await codemux({ action: "call", tool: "bad__echo", arguments: { text: "x".repeat(400) } });
    expect(textOf(result)).toBe("x".repeat(400));
    expect(result._meta).toMatchObject({ "codemux/bytes": 400, "codemux/estimatedTokens": 100 });
  });

  it("gives call_tool and execute_code answers in mode code the same _meta figures", async () => {
    const ctx = { core: h.core, session: h.core.session(), origin: "cli" } as const;
    const code = h.core.surface("code");
    const called = await code.callTool("call_tool", { name: "bad__echo", args: { text: "é".repeat(10) } }, ctx);
    expect(called._meta).toMatchObject({ "codemux/bytes": 20, "codemux/estimatedTokens": 3 });
    const ran = await code.callTool("execute_code", { code: "export default 42" }, ctx);
    const body = textOf(ran);
    expect(ran._meta).toMatchObject({ "codemux/bytes": Buffer.byteLength(body), "codemux/estimatedTokens": estimateTokens(body) });
  });

  it("keeps a result on request and answers with a handle, its size, tokens and a short preview", async () => {
    const kept = await json({ action: "call", tool: "bad__huge", arguments: { bytes: 5000, lines: true }, keep: true });
    expect(kept).toMatchObject({
      handle: expect.stringMatching(/^res_[0-9a-f]+$/),
      tool: "bad__huge",
      bytes: expect.any(Number),
      estimatedTokens: expect.any(Number),
    });
    expect(kept.bytes as number).toBeGreaterThanOrEqual(5000);
    expect(kept.estimatedTokens).toBe(Math.ceil((kept.bytes as number) / 4));
    expect((kept.preview as string).length).toBeLessThan(400);
    expect(JSON.parse(await text({ action: "read", handle: kept.handle, op: "stat" }))).toMatchObject({ handle: kept.handle, bytes: kept.bytes });
  });
});

describe("spill control", () => {
  it("answers a result over the threshold with a JSON notice: autoSpilled, size, tokens, a preview and how to go on", async () => {
    const spilled = await json({ action: "call", tool: "bad__huge", arguments: { bytes: 200_000, lines: true } });
    expect(spilled).toMatchObject({
      handle: expect.stringMatching(/^res_[0-9a-f]+$/),
      tool: "bad__huge",
      autoSpilled: true,
      lines: expect.any(Number),
      expiresAt: expect.any(String),
      hint: expect.stringContaining("resultSizeThreshold"),
    });
    expect(spilled.bytes as number).toBeGreaterThanOrEqual(200_000);
    expect(spilled.estimatedTokens).toBe(Math.ceil((spilled.bytes as number) / 4));
    expect(spilled.preview).toMatch(/^line 1: x+/);
    expect((spilled.preview as string).length).toBeLessThanOrEqual(301);
    expect(spilled.topLevelKeys).toBeUndefined();
  });

  it("takes a call's resultSizeThreshold: lower spills a small result (with a JSON object's keys), higher lets a large one through, capped at 1 MiB", async () => {
    const small = await json({ action: "call", tool: "bad__structured", arguments: { n: 21 }, resultSizeThreshold: 10 });
    expect(small).toMatchObject({ autoSpilled: true, tool: "bad__structured", topLevelKeys: ["n", "doubled"], topLevelKeyCount: 2 });
    const through = await codemux({ action: "call", tool: "bad__huge", arguments: { bytes: 200_000 }, resultSizeThreshold: 300_000 });
    expect(textOf(through)).toHaveLength(200_000);
    const capped = await json({ action: "call", tool: "bad__huge", arguments: { bytes: 1_100_000 }, resultSizeThreshold: 5_000_000 });
    expect(capped).toMatchObject({ autoSpilled: true, bytes: 1_100_000 });
    // 0 is the global threshold (64 KB here), never "unlimited".
    expect(await json({ action: "call", tool: "bad__huge", arguments: { bytes: 100_000 }, resultSizeThreshold: 0 })).toMatchObject({ autoSpilled: true });
    expect(await text({ action: "call", tool: "bad__echo", arguments: { text: "inline" }, resultSizeThreshold: 0 })).toBe("inline");
    expect(textOf(await codemux({ action: "call", tool: "bad__echo", arguments: { text: "x" }, resultSizeThreshold: -1 }))).toMatch(/resultSizeThreshold/);
  });

  it("marks a kept result asked for with keep as not autoSpilled, and keeps an error result's isError", async () => {
    expect(await json({ action: "call", tool: "bad__echo", arguments: { text: "kept" }, keep: true })).toMatchObject({ autoSpilled: false });
    const failed = await codemux({ action: "call", tool: "bad__fail", arguments: { message: "e".repeat(200) }, resultSizeThreshold: 50 });
    expect(failed.isError).toBe(true);
    expect(JSON.parse(textOf(failed))).toMatchObject({ autoSpilled: true, tool: "bad__fail" });
  });
});

describe("action exec", () => {
  it("answers exactly as execute_code", async () => {
    const body = await json({ action: "exec", code: 'import { echo } from "mcp/servers/bad"; export default (await echo({ text: "in" })) + "!";' });
    expect(body).toMatchObject({ result: "in!", toolCalls: 1, estimatedTokens: expect.any(Number) });
    const failed = await codemux({ action: "exec", code: "throw new Error('boom')" });
    expect(failed.isError).toBe(true);
    expect(textOf(failed)).toContain("boom");
  });
});

describe("action read", () => {
  it("pages a result kept because it was large: stat, head, tail, slice, grep, read with maxBytes", async () => {
    const spilled = await json({ action: "call", tool: "bad__huge", arguments: { bytes: 200_000, lines: true } });
    const handle = spilled.handle as string;
    expect(JSON.parse(await text({ action: "read", handle }))).toMatchObject({ handle, tool: "bad__huge", estimatedTokens: expect.any(Number) });
    expect(await text({ action: "read", handle, op: "head", lines: 2 })).toMatch(/^1: line 1: x+\n2: line 2: x+$/);
    expect(await text({ action: "read", handle, op: "tail", lines: 1 })).toMatch(/^\d+: line \d+: x+$/);
    expect(await text({ action: "read", handle, op: "slice", from: 10, to: 11 })).toMatch(/^10: line 10: x+\n11: line 11: x+$/);
    expect(await text({ action: "read", handle, op: "grep", pattern: "^line 77:" })).toMatch(/^1 matching line of \d+:\n77: line 77/);
    expect(await text({ action: "read", handle, op: "read", maxBytes: 20 })).toMatch(
      /^line 1: x{12}\n\[20 of \d+ bytes shown; continue with \{"op":"read","fromByte":20\}\]$/,
    );
    expect(textOf(await codemux({ action: "read", handle: "res_nope" }))).toMatch(/No kept result "res_nope"/);
  });
});

describe("a chain through kept results", () => {
  it("feeds one call's kept result to the next call's arguments without the payload passing through the client", async () => {
    const payload = "p".repeat(100_000);
    const out = join(dir, "copy.txt");
    // The arguments of the second call sit in a file: the first call reads them, and codemux keeps them.
    await writeFile(join(dir, "args.json"), JSON.stringify({ write: { path: out, content: payload } }));
    received.length = 0;

    const first = await json({ action: "call", tool: "read_text_file", arguments: { path: join(dir, "args.json") }, keep: true });
    expect(first.handle).toMatch(/^res_/);
    const second = await codemux({ action: "call", tool: "fs__write_file", argumentsFrom: first.handle, pointer: "/write" });
    expect(second.isError).toBeFalsy();

    expect(await readFile(out, "utf8")).toBe(payload);
    const through = received.map((r) => JSON.stringify(r)).join("");
    expect(through).not.toContain("p".repeat(1000));
    expect(through.length).toBeLessThan(3000);
  });

  it("refuses arguments that are not an object, a pointer to nothing, and another session's handle", async () => {
    const kept = await json({ action: "call", tool: "bad__echo", arguments: { text: '{"list":[1,2],"obj":{"text":"deep"}}' }, keep: true });
    expect(await text({ action: "call", tool: "bad__echo", argumentsFrom: kept.handle, pointer: "/obj" })).toBe("deep");
    expect(await text({ action: "call", tool: "bad__echo", argumentsFrom: kept.handle, pointer: "/list" })).toMatch(
      /Arguments must be a JSON object; res_\w+ at \/list is a list/,
    );
    expect(await text({ action: "call", tool: "bad__echo", argumentsFrom: kept.handle, pointer: "/missing" })).toMatch(/has nothing at "\/missing"/);
    const notJson = await json({ action: "call", tool: "bad__echo", arguments: { text: "plain words" }, keep: true });
    expect(await text({ action: "call", tool: "bad__echo", argumentsFrom: notJson.handle })).toMatch(/is not JSON, so it cannot be a call's arguments/);
    expect(await text({ action: "call", tool: "bad__echo", arguments: {}, argumentsFrom: kept.handle })).toMatch(
      'Give one of "arguments", "argumentsFrom" and "argumentsFile", not "arguments" and "argumentsFrom".',
    );

    const other = await h.core
      .surface("dispatch")
      .callTool(DISPATCH_TOOL_NAME, { action: "call", tool: "bad__echo", argumentsFrom: kept.handle }, { session: h.core.session(), origin: "cli" });
    expect(textOf(other)).toMatch(/No kept result/);
  });
});
