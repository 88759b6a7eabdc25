import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { config, connect, misbehaving, node, referenceServer, textOf, type Harness } from "./helpers";

// What the model reads when it gets something wrong: each answer says what is wrong and what would be right.
let h: Harness;
let dir: string;

const execute = async (code: string) => JSON.parse(await h.text("execute_code", { code })) as { result?: unknown; error?: { kind: string; message: string } };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "codemux-messages-"));
  await writeFile(join(dir, "a.txt"), "a\n");
  h = await connect({
    config: config({
      fs: { ...node(referenceServer("@modelcontextprotocol/server-filesystem"), dir), tools: { deny: ["write_file"] } },
      mb: misbehaving(),
      everything: node(referenceServer("@modelcontextprotocol/server-everything"), "stdio"),
    }),
    dataDir: join(dir, "data"),
  });
  await h.core.ready();
});
afterAll(async () => {
  await h.close();
  await rm(dir, { recursive: true, force: true });
});

describe("a tool the config denies", () => {
  it("answers that the config denies it, not that no such tool exists", async () => {
    const denied = await h.call("call_tool", { name: "fs__write_file", args: { path: join(dir, "b.txt"), content: "x" } });
    expect(denied.isError).toBe(true);
    expect(textOf(denied)).toBe(`Server "fs" cannot call "write_file": it is denied by the config's tools.deny.`);
    // A name the config does not deny is still a typo, with its did-you-mean.
    expect(textOf(await h.call("call_tool", { name: "fs__read_txt_file" }))).toMatch(/^No tool named "fs__read_txt_file"\. Did you mean "fs__read_text_file"/);
  });
});

describe("a tool that does not exist", () => {
  it("says search_tools finds them, in call_tool and in a snippet (mode code's own way)", async () => {
    expect(textOf(await h.call("call_tool", { name: "nosuch__tool" }))).toMatch(/^No tool named "nosuch__tool"\. .*; search_tools finds them\.$/);
    const run = await execute('import { callTool } from "mcp/bridge";\nexport default await callTool("nosuch__tool", {});');
    expect(run.error?.message).toMatch(/No tool named "nosuch__tool"\. .*; search_tools finds them\./);
  });
});

describe("a mistyped import in a snippet", () => {
  it("names the module it was close to, in the tool's server or in the server spelled closest", async () => {
    const tool = await execute('import { echo } from "mcp/servers/mb/ech";\nexport default await echo({ text: "x" });');
    expect(tool.error).toMatchObject({ kind: "import" });
    expect(tool.error?.message).toContain(
      'Cannot import "mcp/servers/mb/ech": no such module is available to the sandbox (did you mean "mcp/servers/mb/echo"?)',
    );
    const server = await execute('import { echo } from "mcp/servers/mbb/echo";\nexport default 1;');
    expect(server.error?.message).toContain('(did you mean "mcp/servers/mb/echo"?)');
    // read_module makes the same suggestion.
    expect(textOf(await h.call("read_module", { specifier: "mcp/servers/mbb/echo" }))).toMatch(
      /^No module "mcp\/servers\/mbb\/echo"\. Did you mean "mcp\/servers\/mb\/echo"/,
    );
  });
});

describe("a snippet's wrong arguments", () => {
  it("are reported with every problem, not only the first", async () => {
    const run = await execute('import { getSum } from "mcp/servers/everything/getSum";\nexport default await getSum({ a: "1" } as never);');
    expect(run.error?.message).toContain("Invalid arguments for everything__get-sum: b: required; a: must be number");
  });
});

describe("meta-tool fields", () => {
  it("call_tool takes arguments under MCP's own name, arguments, as it takes args", async () => {
    expect(await h.text("call_tool", { name: "mb__echo", arguments: { text: "by its MCP name" } })).toBe("by its MCP name");
    const both = await h.call("call_tool", { name: "mb__echo", args: { text: "a" }, arguments: { text: "b" } });
    expect(both.isError).toBe(true);
    expect(textOf(both)).toBe('"args" and "arguments" are the same field; send the arguments once.');
  });

  it("every meta-tool refuses a field it does not take by name, with the field meant", async () => {
    const misnamed = await h.call("call_tool", { name: "mb__echo", argz: { text: "x" } });
    expect(misnamed.isError).toBe(true);
    expect(textOf(misnamed)).toBe('call_tool takes no field "argz" (did you mean "args"?); it takes name, args, background.');
    expect(textOf(await h.call("search_tools", { query: "echo", limt: 3 }))).toMatch(/^search_tools takes no field "limt" \(did you mean "limit"\?\)/);
    expect(textOf(await h.call("execute_code", { code: "export default 1;", timeout: 500 }))).toMatch(
      /^execute_code takes no field "timeout" \(did you mean "timeoutMs"\?\)/,
    );
    for (const { name } of (await h.client.listTools()).tools) {
      const answer = await h.call(name, { zzz_unknown: 1 });
      expect(answer.isError, name).toBe(true);
      expect(textOf(answer)).toMatch(new RegExp(`^${name} takes no field "zzz_unknown"; it takes `));
    }
  });
});

describe("a skill whose server is not in the config", () => {
  it("is listed under mcp/skills with the server it needs", async () => {
    const dataDir = join(dir, "skills-data");
    const code = `import { echo } from "mcp/servers/gone/echo";\n\n/** Says it back. */\nexport async function relay(input: { text: string }): Promise<unknown> {\n  return await echo(input);\n}\n`;
    const before = await connect({ config: config({ gone: misbehaving() }), dataDir });
    try {
      await before.core.ready();
      expect(await before.text("save_skill", { name: "relay", code, description: "Say a text back through the gone server." })).toContain(
        "Saved mcp/skills/relay",
      );
    } finally {
      await before.close();
    }
    const after = await connect({ config: config({ mb: misbehaving() }), dataDir });
    try {
      await after.core.ready();
      expect(await after.text("list_modules")).toContain('mcp/skills  (1 skill; check relay: it needs server "gone", which is not in the config)');
      expect(await after.text("list_modules", { path: "mcp/skills" })).toContain('[check it: it needs server "gone", which is not in the config]');
    } finally {
      await after.close();
    }
  });
});
