import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { config, connect, misbehaving, node, referenceServer, type Harness } from "./helpers";

const SECRET = "codemux-secret-7f3a9";
let h: Harness;
let root: string;
let secretFile: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "codemux-hostile-"));
  await mkdir(join(root, "allowed"));
  secretFile = join(root, "secret.txt");
  await writeFile(secretFile, SECRET);
  process.env.CODEMUX_HOSTILE_SECRET = SECRET;
  h = await connect({ config: config({ fs: node(referenceServer("@modelcontextprotocol/server-filesystem"), join(root, "allowed")), m: misbehaving() }) });
  await h.core.ready();
});
afterAll(async () => {
  delete process.env.CODEMUX_HOSTILE_SECRET;
  await h.close();
  await rm(root, { recursive: true, force: true });
});

const attempts: Array<[string, string]> = [
  ["a host file by absolute path", `import s from ${JSON.stringify("SECRET_FILE")};\nexport default s;`],
  ["a host file through a climbing mcp path", `import s from "mcp/servers/fs/../../../../../../SECRET_FILE";\nexport default s;`],
  ["a node builtin", `import { readFileSync } from "node:fs";\nexport default readFileSync(${JSON.stringify("SECRET_FILE")}, "utf8");`],
  ["a dynamic import of a builtin", `const m = "node:" + "fs";\nexport default (await import(m)).readFileSync(${JSON.stringify("SECRET_FILE")}, "utf8");`],
  [
    "process and the environment",
    "export default (globalThis as any).process?.env?.CODEMUX_HOSTILE_SECRET ?? (0, eval)('process').env.CODEMUX_HOSTILE_SECRET;",
  ],
  ["the constructor escape", "export default (function () {}).constructor('return process')().env.CODEMUX_HOSTILE_SECRET;"],
  ["the network", "export default await (await fetch('http://127.0.0.1:1/')).text();"],
  ["the bridge with a name outside the catalog", 'export default await (globalThis as any).__host_call("nonexistent__read_file", { path: "SECRET_FILE" });'],
  [
    "the bridge with a server's tool but a path outside its roots",
    `import { readTextFile } from "mcp/servers/fs/readTextFile";\nexport default await readTextFile({ path: ${JSON.stringify("SECRET_FILE")} });`,
  ],
  [
    "the bridge with a traversal path",
    `import { readTextFile } from "mcp/servers/fs/readTextFile";\nexport default await readTextFile({ path: "ALLOWED/../secret.txt" });`,
  ],
  [
    "the bridge with arguments of the wrong shape",
    'import { callTool } from "mcp/bridge";\nexport default await callTool("m__env", "CODEMUX_HOSTILE_SECRET" as any);',
  ],
];

describe("escape attempts through execute_code", () => {
  it.each(attempts)("%s is contained with a clean error", async (_name, template) => {
    const code = template.replaceAll("SECRET_FILE", secretFile).replaceAll("ALLOWED", join(root, "allowed"));
    const result = await h.call("execute_code", { code, timeoutMs: 5000 });
    const text = (result.content[0] as { text: string }).text;
    expect(result.isError).toBe(true);
    expect(text).not.toContain(SECRET);
    const body = JSON.parse(text) as { error: { kind: string; message: string } };
    expect(body.error.message.length).toBeGreaterThan(0);
    expect(body.error.message).not.toMatch(/\n\s+at .*\.js:\d+/);
    expect(await h.text("call_tool", { name: "m__echo", args: { text: "still serving" } })).toBe("still serving");
  });

  it("the env tool of a downstream does not see codemux's environment either", async () => {
    const body = JSON.parse(
      await h.text("execute_code", { code: 'import { env } from "mcp/servers/m/env";\nexport default await env({ name: "CODEMUX_HOSTILE_SECRET" });' }),
    );
    expect(body.result).toEqual({ value: null });
  });
});

describe("requests that would block the shared event loop", () => {
  const keptHandle = async (args: Record<string, unknown>) => {
    const preview = await h.text("call_tool", { name: "m__huge", args });
    return /"(res_[0-9a-f]+)"/.exec(preview)?.[1] as string;
  };

  it("stops a read_result grep whose pattern backtracks catastrophically", async () => {
    const handle = await keptHandle({ bytes: 100_000, lines: true });
    const result = await h.call("read_result", { handle, op: "grep", pattern: "^line 1: x{23}(x|xx)+y" });
    expect(result.isError).toBe(true);
    expect((result.content[0] as { text: string }).text).toMatch(/took longer than \d+ ms/);
    expect(await h.text("call_tool", { name: "m__echo", args: { text: "still serving" } })).toBe("still serving");
  }, 30_000);

  it("bounds read_result grep context: a huge request is refused, the largest allowed stops at one page", async () => {
    const handle = await keptHandle({ bytes: 2_000_000, lines: true });
    expect(await h.text("read_result", { handle, op: "grep", pattern: "line", context: 1_000_000_000 })).toBe('"context" must be between 0 and 20.');
    const text = await h.text("read_result", { handle, op: "grep", pattern: "line", context: 20 });
    expect(text).toMatch(/^\d+ matching lines of \d+:\n1: line 1: /);
    expect(text).toMatch(/\[cut at 24000 characters; narrow the pattern or use slice\]$/);
  }, 60_000);

  it("refuses a tool name far longer than any before looking for close names", async () => {
    const body = JSON.parse(
      await h.text("execute_code", { code: 'export default await __host_call("a b ".repeat(500_000), {}).catch((e) => String(e));' }),
    ) as { result: string };
    // The sandbox refuses it at its boundary; call_tool refuses it in the pipeline, before the catalog looks for close names.
    expect(body.result).toContain("the name is longer than 512 characters");
    expect(await h.text("call_tool", { name: "a b ".repeat(500_000) })).toContain("No tool has a name of 2000000 characters");
  });

  it("refuses a search query far longer than a description of a task", async () => {
    const result = await h.call("search_tools", { query: "read file ".repeat(1_000) });
    expect(result.isError).toBe(true);
    expect((result.content[0] as { text: string }).text).toContain("at most 1000");
  });
});
