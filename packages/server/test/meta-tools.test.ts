import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { config, connect, misbehaving, node, referenceServer, textOf, type Harness } from "./helpers";

let h: Harness;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "codemux-server-"));
  await writeFile(join(dir, "hello.txt"), "hello from disk\nsecond line\n");
  h = await connect({
    config: config({
      fs: node(referenceServer("@modelcontextprotocol/server-filesystem"), dir),
      memory: { ...node(referenceServer("@modelcontextprotocol/server-memory")), env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") } },
      everything: node(referenceServer("@modelcontextprotocol/server-everything"), "stdio"),
      bad: misbehaving(),
    }),
    largeResultBytes: 64 * 1024,
  });
  await h.core.ready();
});
afterAll(async () => {
  await h.close();
  await rm(dir, { recursive: true, force: true });
});

describe("the upfront list", () => {
  it("is the meta-tools only, whatever the catalog holds", async () => {
    const { tools } = await h.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["search_tools", "list_modules", "read_module", "execute_code", "call_tool", "read_result", "save_skill"]);
    expect(h.core.catalog.size).toBeGreaterThan(30);
    // A fixed, small cost (SPEC §5): 2,236 JSON characters, about 532 o200k tokens when pinned (~4.2 a token); the budget
    // is 645 tokens with jobs (@codemux/jobs pins that list), which leaves these ~548 (2,300 characters).
    expect(JSON.stringify(tools).length).toBeLessThanOrEqual(2300);
    // How big a kept result is in the model's terms (seed 004's rule of thumb), in one clause of read_result's description.
    expect(tools.find((t) => t.name === "read_result")?.description).toContain("~4 characters a token");
    // Bounds and defaults are enforced and applied on input but not spent on the model's context, nor are unlisted aliases.
    for (const key of ["maxLength", "maxItems", "minimum", "maximum", "default", "unlisted", "args_json"])
      expect(JSON.stringify(tools)).not.toContain(`"${key}"`);
  });
});

describe("search_tools", () => {
  it("finds a reference server's tool with its name, module and signature", async () => {
    const text = await h.text("search_tools", { query: "read a text file", limit: 3 });
    expect(text).toContain("fs__read_text_file  mcp/servers/fs/readTextFile");
    expect(text).toMatch(/readTextFile\(\{ path: string/);
  });

  it("filters by server, and shows schemas with detail full", async () => {
    const text = await h.text("search_tools", { query: "entities", server: "memory", detail: "full", limit: 2 });
    expect(
      text
        .split("\n")
        .filter((l) => /^\S+__/.test(l))
        .every((l) => l.startsWith("memory__")),
    ).toBe(true);
    expect(text).toContain("input schema: {");
  });

  it("answers bad arguments with a clear error", async () => {
    const empty = await h.call("search_tools", { query: "  " });
    expect(empty.isError).toBe(true);
    expect(textOf(empty)).toMatch(/"query" must not be empty/);
    const badServer = await h.call("search_tools", { query: "x", server: "nope" });
    expect(textOf(badServer)).toMatch(/No server named "nope"\. Servers: bad, everything, fs, memory/);
    expect(textOf(await h.call("search_tools", { query: "x", limit: 500 }))).toMatch(/"limit" must be between 1 and 50/);
  });
});

describe("call_tool", () => {
  it("calls a downstream tool and passes its result through", async () => {
    expect(await h.text("call_tool", { name: "fs__read_text_file", args: { path: join(dir, "hello.txt") } })).toContain("hello from disk");
    expect(await h.text("call_tool", { name: "everything__echo", args_json: JSON.stringify({ message: "hi" }) })).toContain("hi");
  });

  it("refuses schema-invalid arguments before the call, naming the field", async () => {
    const before = JSON.parse(await h.text("call_tool", { name: "bad__counter" })).calls;
    const result = await h.call("call_tool", { name: "bad__echo", args: { text: 42 } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe("Invalid arguments for bad__echo: text: must be string");
    const missing = await h.call("call_tool", { name: "fs__read_text_file", args: {} });
    expect(textOf(missing)).toMatch(/path: required/);
    const after = JSON.parse(await h.text("call_tool", { name: "bad__counter" })).calls;
    expect(after).toBe(before + 1);
  });

  it("suggests names for an unknown tool and explains non-object arguments", async () => {
    expect(textOf(await h.call("call_tool", { name: "fs__read_txt_file" }))).toMatch(/No tool named "fs__read_txt_file"\. Did you mean "fs__read_text_file"/);
    expect(textOf(await h.call("call_tool", { name: "bad__echo", args_json: "{nope" }))).toMatch(/"args_json" is not valid JSON/);
    expect(textOf(await h.call("call_tool", { name: "bad__echo", args: [1] }))).toMatch(/"args" must be an object of named values, not a list/);
  });

  it("takes args over args_json when a client sends both (seed 002's rule)", async () => {
    expect(await h.text("call_tool", { name: "bad__echo", args: { text: "from args" }, args_json: JSON.stringify({ text: "from args_json" }) })).toBe(
      "from args",
    );
  });

  it("returns a tool's error result as an error result", async () => {
    const result = await h.call("call_tool", { name: "bad__fail", args: { message: "disk full" } });
    expect(result).toMatchObject({ isError: true, content: [{ text: "disk full" }] });
  });

  it("passes progress to the client", async () => {
    const progress: number[] = [];
    const result = await h.client.callTool({ name: "call_tool", arguments: { name: "bad__slow", args: { ms: 300, steps: 3 } } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    expect(textOf(result as CallToolResult)).toBe("slept 300 ms");
    expect(progress.length).toBeGreaterThanOrEqual(2);
  });

  it("cancels the downstream call when the client cancels, and the server sees the cancellation", async () => {
    const cancellations = async () => JSON.parse(await h.text("call_tool", { name: "bad__cancellations" })) as { count: number; notices: number };
    const before = await cancellations();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    await expect(h.client.callTool({ name: "call_tool", arguments: { name: "bad__hang" } }, undefined, { signal: controller.signal })).rejects.toThrow();
    // The client's own rejection proves nothing: the downstream must have been told, and only about that call.
    await expect.poll(async () => (await cancellations()).count, { timeout: 10_000 }).toBe(before.count + 1);
    expect((await cancellations()).notices).toBe(before.notices + 1);
    expect(await h.text("call_tool", { name: "bad__echo", args: { text: "alive" } })).toBe("alive");
  });

  it("cancels a snippet's call in flight at the server when the client cancels execute_code", async () => {
    const cancellations = async () => JSON.parse(await h.text("call_tool", { name: "bad__cancellations" })) as { count: number };
    const before = await cancellations();
    const calls = async () => (JSON.parse(await h.text("call_tool", { name: "bad__counter" })) as { calls: number }).calls;
    const start = await calls();
    const controller = new AbortController();
    const code = 'import { hang } from "mcp/servers/bad/hang";\nexport default await hang({});';
    const running = h.client.callTool({ name: "execute_code", arguments: { code } }, undefined, { signal: controller.signal });
    // Cancel only once the server has the hang call (each poll is one counter call of its own), however slow the snippet's start.
    let polls = 0;
    await expect.poll(async () => (await calls()) - start - ++polls, { timeout: 20_000 }).toBeGreaterThanOrEqual(1);
    controller.abort();
    await expect(running).rejects.toThrow();
    await expect.poll(async () => (await cancellations()).count, { timeout: 10_000 }).toBe(before.count + 1);
  });

  it("cancels at the server a snippet's call still pending when the snippet ends", async () => {
    const cancellations = async () => JSON.parse(await h.text("call_tool", { name: "bad__cancellations" })) as { count: number; notices: number };
    const before = await cancellations();
    const code =
      'import { hang } from "mcp/servers/bad/hang";\nimport { echo } from "mcp/servers/bad/echo";\nvoid hang({}).catch(() => undefined);\nexport default await echo({ text: "done" });';
    expect(JSON.parse(await h.text("execute_code", { code })).result).toBe("done");
    await expect.poll(async () => (await cancellations()).count, { timeout: 10_000 }).toBe(before.count + 1);
    expect((await cancellations()).notices).toBe(before.notices + 1);
  });

  it("sends no cancellation for calls that already finished when a snippet ends", async () => {
    const notices = async () => (JSON.parse(await h.text("call_tool", { name: "bad__cancellations" })) as { notices: number }).notices;
    const before = await notices();
    const code =
      'import { echo } from "mcp/servers/bad/echo";\nconst all = await Promise.all([1, 2, 3, 4, 5].map((i) => echo({ text: String(i) })));\nfor (let i = 0; i < 5; i++) await echo({ text: "again" });\nexport default all.length;';
    expect(JSON.parse(await h.text("execute_code", { code })).result).toBe(5);
    expect(await notices()).toBe(before);
  });
});

describe("large results", () => {
  it("keeps a result over the limit and pages through it with read_result", async () => {
    const result = await h.call("call_tool", { name: "bad__huge", args: { bytes: 300_000, lines: true } });
    const text = textOf(result);
    expect(text.length).toBeLessThan(4000);
    expect(text).toMatch(/is 29\d KB \(~7\d,\d{3} tokens, 4,\d{3} lines\), too large to show whole/);
    const handle = /kept as "(res_[0-9a-f]+)"/.exec(text)![1]!;
    expect(JSON.parse(await h.text("read_result", { handle, op: "stat" }))).toMatchObject({ handle, tool: "bad__huge", lines: expect.any(Number) });
    expect(await h.text("read_result", { handle, op: "head", lines: 2 })).toMatch(/^1: line 1: x+\n2: line 2: x+$/);
    expect(await h.text("read_result", { handle, op: "slice", from: 100, to: 101 })).toMatch(/^100: line 100: x+\n101: line 101: x+$/);
    expect(await h.text("read_result", { handle, op: "tail", lines: 1 })).toMatch(/^\d+: line \d+: x+$/);
    const grep = await h.text("read_result", { handle, op: "grep", pattern: "^line 77:", context: 1 });
    expect(grep).toMatch(/^1 matching line of \d+:\n76: line 76: x+\n77: line 77: x+\n78: line 78: x+$/);
    expect(textOf(await h.call("read_result", { handle: "res_nope", op: "stat" }))).toMatch(/No kept result "res_nope"/);
  });

  it("takes call_tool's resultSizeThreshold (capped at 1 MiB, 0 the global one) and names a JSON object's top-level keys in the notice", async () => {
    const kept = textOf(await h.call("call_tool", { name: "bad__structured", args: { n: 2 }, resultSizeThreshold: 10 }));
    expect(kept).toMatch(/too large to show whole/);
    expect(kept).toContain("Top-level keys: n, doubled.");
    expect(textOf(await h.call("call_tool", { name: "bad__huge", args: { bytes: 100_000 }, resultSizeThreshold: 200_000 }))).toHaveLength(100_000);
    expect(textOf(await h.call("call_tool", { name: "bad__huge", args: { bytes: 1_100_000 }, resultSizeThreshold: 5_000_000 }))).toMatch(/too large/);
    expect(textOf(await h.call("call_tool", { name: "bad__huge", args: { bytes: 100_000 }, resultSizeThreshold: 0 }))).toMatch(/too large/);
    expect(textOf(await h.call("call_tool", { name: "bad__echo", args: { text: "inline" }, resultSizeThreshold: 0 }))).toBe("inline");
  });

  it("shows a huge single line clipped, around the match for grep", async () => {
    const text = textOf(await h.call("call_tool", { name: "bad__huge", args: { bytes: 200_000 } }));
    const handle = /kept as "(res_[0-9a-f]+)"/.exec(text)![1]!;
    const head = await h.text("read_result", { handle, op: "head" });
    expect(head).toMatch(/^1: x{1000}… \[line of 200000 characters; op "read" pages within it\]$/);
    const grep = await h.text("read_result", { handle, op: "grep", pattern: "x$" });
    expect(grep).toMatch(/\n1: …x{1000}$/);
  });

  it("leaves results under the limit alone", async () => {
    expect(await h.text("call_tool", { name: "bad__huge", args: { bytes: 1000 } })).toBe("x".repeat(1000));
  });
});

describe("modules", () => {
  it("lists servers, then a server's modules with signatures", async () => {
    const top = await h.text("list_modules");
    expect(top).toContain("mcp/servers/fs  (");
    expect(top).toMatch(/Snippet globals: .*URLSearchParams.*TextEncoder/);
    const fs = await h.text("list_modules", { path: "mcp/servers/fs" });
    expect(fs).toContain("mcp/servers/fs/readTextFile  readTextFile({ path: string");
    expect(fs).toContain('import { schema } from "mcp/servers/fs/<function>.schema"');
  });

  it("gives a tool's JSON Schema as a .schema module that read_module shows and a snippet imports", async () => {
    const inputSchema = h.core.catalog.resolve("fs__read_text_file").tool.inputSchema;
    const source = await h.text("read_module", { specifier: "mcp/servers/fs/readTextFile.schema" });
    expect(source).toContain("export const schema = {");
    const body = JSON.parse(
      await h.text("execute_code", {
        code: `
          import { schema } from "mcp/servers/fs/readTextFile.schema";
          import { schema as echo } from "mcp/servers/bad/echo.schema";
          export default { schema, echoRequired: echo.required };`,
      }),
    );
    expect(body.result).toEqual({ schema: inputSchema, echoRequired: ["text"] });
  });

  it("reads a typed module and refuses absolute and climbing paths", async () => {
    const source = await h.text("read_module", { specifier: "mcp/servers/fs/readTextFile" });
    expect(source).toContain("export interface ReadTextFileInput");
    expect(source).toContain("export async function readTextFile(");
    for (const specifier of ["/etc/passwd", "mcp/../../etc/passwd", "..\\secrets", "C:\\Windows\\win.ini"]) {
      const result = await h.call("read_module", { specifier });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/absolute path|climbs with "\.\."/);
    }
    expect(textOf(await h.call("read_module", { specifier: "mcp/servers/fs/nothing" }))).toMatch(/No module "mcp\/servers\/fs\/nothing"/);
  });
});

describe("execute_code", () => {
  const run = async (code: string, extra: Record<string, unknown> = {}) => {
    const result = await h.call("execute_code", { code, ...extra });
    return { result, body: JSON.parse(textOf(result)) };
  };

  it("reads a 180 KB file, filters it and writes the result inside one call; the answer stays small", async () => {
    const lines = Array.from({ length: 3000 }, (_, i) => `${String(i).padStart(5, "0")} ${i % 10 === 0 ? "ERROR" : "info "} ${"event payload ".repeat(3)}`);
    await writeFile(join(dir, "big.log"), lines.join("\n"));
    expect((await readFile(join(dir, "big.log"))).length).toBeGreaterThan(150_000);
    const { result, body } = await run(`
      import { readTextFile } from "mcp/servers/fs/readTextFile";
      import { writeFile } from "mcp/servers/fs/writeFile";
      const { content } = await readTextFile({ path: ${JSON.stringify(join(dir, "big.log"))} });
      const errors = content.split("\\n").filter((line: string) => line.includes("ERROR"));
      await writeFile({ path: ${JSON.stringify(join(dir, "errors.log"))}, content: errors.join("\\n") });
      export default { total: content.split("\\n").length, errors: errors.length };
    `);
    expect(body).toMatchObject({ result: { total: 3000, errors: 300 }, toolCalls: 2 });
    expect(textOf(result).length).toBeLessThan(3000);
    expect((await readFile(join(dir, "errors.log"), "utf8")).split("\n")).toHaveLength(300);
  });

  it("runs calls awaited together concurrently", async () => {
    const { body } = await run(`
      import { slow } from "mcp/servers/bad/slow";
      const results = await Promise.all(Array.from({ length: 10 }, () => slow({ ms: 400, steps: 1 })));
      export default results.length;
    `);
    expect(body.result).toBe(10);
    // One after another would take 4,000 ms.
    expect(body.durationMs).toBeLessThan(4000);
  });

  it("reports a thrown error with its line in the snippet as written", async () => {
    const { result, body } = await run(["const a: number = 1;", "", "if (a === 1) {", "  throw new Error('boom on four');", "}"].join("\n"));
    expect(result.isError).toBe(true);
    expect(body.error).toMatchObject({ kind: "runtime", line: 4 });
    expect(body.error.message).toContain("boom on four");
  });

  it("places a tool error left uncaught at the snippet's line that made the call, through a generated module too", async () => {
    const direct = await run(['import { callTool } from "mcp/bridge";', "", 'await callTool("bad__fail", { message: "it broke" });'].join("\n"));
    expect(direct.body.error).toMatchObject({ kind: "runtime", line: 3 });
    expect(direct.body.error.message).toMatch(/^snippet\.ts:3:\d+: .*it broke/);
    const wrapped = await run(['import { fail } from "mcp/servers/bad/fail";', "const x = 1;", "", "  await fail({ message: `broke ${x}` });"].join("\n"));
    expect(wrapped.body.error).toMatchObject({ kind: "runtime", line: 4 });
    expect(wrapped.body.error.message).not.toContain("mcp/bridge");
  });

  it("refuses schema-invalid arguments inside a snippet, naming the field, and surfaces tool errors", async () => {
    const { body } = await run(`
      import { callTool } from "mcp/bridge";
      const out: string[] = [];
      try { await callTool("bad__echo", { text: 5 }); } catch (e) { out.push((e as Error).message); }
      try { await callTool("bad__fail", { message: "nope" }); } catch (e) { out.push((e as Error).message); }
      try { await callTool("nosuch__tool", {}); } catch (e) { out.push((e as Error).message); }
      export default out;
    `);
    expect(body.result[0]).toContain("Invalid arguments for bad__echo: text: must be string");
    expect(body.result[1]).toContain("nope");
    expect(body.result[2]).toContain('No tool named "nosuch__tool"');
  });

  it("turns a result into a value on the host: a ToolError with the server's message and result, a note on stderr for an image left out", async () => {
    const { body } = await run(`
      import { callTool, callToolRaw, ToolError } from "mcp/bridge";
      const error = await callTool("bad__fail", { message: "it broke" }).catch((e: unknown) => e);
      const image = await callTool("everything__get-tiny-image", {});
      const raw = await callToolRaw("everything__get-tiny-image", {});
      export default {
        isToolError: error instanceof ToolError,
        tool: (error as ToolError).tool,
        message: (error as ToolError).message,
        isError: (error as ToolError).result.isError,
        valueIsText: typeof image === "string",
        rawKinds: raw.content.map((part) => part.type),
      };
    `);
    expect(body.result).toMatchObject({ isToolError: true, tool: "bad__fail", isError: true, valueIsText: true });
    expect(body.result.message).toMatch(/^bad__fail: .*it broke/);
    expect(body.result.rawKinds).toContain("image");
    expect(body.stderr).toContain("everything__get-tiny-image also returned image content");
  });

  it("returns values: structured content, parsed JSON and text", async () => {
    const { body } = await run(`
      import { structured } from "mcp/servers/bad/structured";
      import { counter } from "mcp/servers/bad/counter";
      import { echo } from "mcp/servers/bad/echo";
      const s = await structured({ n: 21 });
      const c = await counter({}) as { calls: number };
      export default { doubled: s.doubled, callsIsNumber: typeof c.calls === "number", text: await echo({ text: "plain" }) };
    `);
    expect(body.result).toEqual({ doubled: 42, callsIsNumber: true, text: "plain" });
  });

  it("keeps a large answer out of the context and makes it readable with read_result", async () => {
    const result = await h.call("execute_code", { code: 'export default Array.from({ length: 5000 }, (_, i) => ({ row: i, text: "some data " + i }));' });
    const text = textOf(result);
    expect(text).toMatch(/^The result of execute_code is \d+ KB/);
    const handle = /kept as "(res_[0-9a-f]+)"/.exec(text)![1]!;
    expect(await h.text("read_result", { handle, op: "grep", pattern: '"row": 4321,', context: 1 })).toContain('"text": "some data 4321"');
  });

  it("sends a progress line per tool call started, naming the tool and its key parameters cut to 80 characters, secrets masked", async () => {
    const messages: string[] = [];
    const progress: number[] = [];
    const query = `ghp_${"a".repeat(36)} ${"long query ".repeat(20)}`;
    const code = `
      import { readTextFile } from "mcp/servers/fs/readTextFile";
      import { searchNodes } from "mcp/servers/memory/searchNodes";
      import { counter } from "mcp/servers/bad/counter";
      await readTextFile({ path: ${JSON.stringify(join(dir, "hello.txt"))} });
      await searchNodes({ query: ${JSON.stringify(query)} });
      await counter({});
      export default "done";`;
    const result = await h.client.callTool({ name: "execute_code", arguments: { code } }, undefined, {
      onprogress: (p) => {
        progress.push(p.progress);
        if (p.message) messages.push(p.message);
      },
    });
    expect(JSON.parse(textOf(result as CallToolResult)).result).toBe("done");
    expect(messages).toEqual([`fs__read_text_file path=${join(dir, "hello.txt")}`, expect.stringMatching(/^memory__search_nodes query=/), "bad__counter"]);
    const shown = (messages[1] as string).slice("memory__search_nodes query=".length);
    expect(shown).toHaveLength(80);
    expect(shown).toMatch(/^\*\*\* long query long query .*…$/);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
  });

  it("keeps the proxy answering while a runaway snippet runs", async () => {
    const runaway = h.call("execute_code", { code: "while (true) {}", timeoutMs: 1500 });
    const started = Date.now();
    expect(await h.text("call_tool", { name: "bad__echo", args: { text: "meanwhile" } })).toBe("meanwhile");
    expect(Date.now() - started).toBeLessThan(1000);
    const body = JSON.parse(textOf(await runaway));
    expect(body.error.kind).toBe("timeout");
  });
});

describe("the upfront list's descriptions", () => {
  it("say what every parameter of every meta-tool is for", async () => {
    // Every token of the list costs each session, so a parameter is explained once: by its own description, by its
    // tool's description naming it, or by its enum's values. These names say it with their type alone.
    const selfEvident = ["query", "limit", "server", "code", "timeoutMs", "background", "name", "args", "description"];
    const { tools } = await h.client.listTools();
    for (const tool of tools) {
      for (const [name, schema] of Object.entries((tool.inputSchema.properties ?? {}) as Record<string, { description?: string; enum?: unknown[] }>)) {
        const explained =
          Boolean(schema.description?.match(/\w/)) ||
          new RegExp(`\\b${name}\\b`).test(tool.description ?? "") ||
          Boolean(schema.enum) ||
          selfEvident.includes(name);
        expect(explained, `${tool.name}.${name}`).toBe(true);
      }
    }
  });

  it("name the connected servers in the instructions", () => {
    expect(h.client.getInstructions()).toMatch(/Servers: .*fs/);
  });

  it("mark each search hit's intent from its annotations", async () => {
    const text = await h.text("search_tools", { query: "read a text file", limit: 1 });
    expect(text.split("\n")[0]).toMatch(/^fs__read_text_file  mcp\/servers\/fs\/readTextFile  \(read-only\)$/);
  });
});
