import { askingServerPath, misbehavingServerPath } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Command } from "commander";
import { buildProgram } from "../src/program";
import { cli, runCli } from "./run-cli";

const tsc = resolve(import.meta.dirname, "../../../node_modules/typescript/bin/tsc");
const run = promisify(execFile);
const require = createRequire(import.meta.url);

let dir: string;
let home: string;
const clients: Client[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "codemux-cli-"));
  home = await mkdtemp(join(tmpdir(), "codemux-home-"));
  await writeFile(join(dir, "notes.txt"), "alpha\nbeta\ngamma\n");
});
afterAll(async () => {
  await Promise.all([dir, home].map((d) => rm(d, { recursive: true, force: true })));
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

const env = () => ({ PATH: process.env.PATH ?? "", HOME: home, CODEMUX_HOME: join(home, ".codemux") });

const codemux = (args: string[], options: { input?: string; env?: Record<string, string>; cwd?: string } = {}) =>
  runCli(args, { cwd: options.cwd ?? dir, env: { ...env(), ...options.env }, ...(options.input === undefined ? {} : { input: options.input }) });

async function client(args: string[]): Promise<Client> {
  const c = new Client({ name: "cli-test", version: "1.0.0" });
  clients.push(c);
  await c.connect(new StdioClientTransport({ command: process.execPath, args: [cli, ...args], cwd: dir, env: env(), stderr: "pipe" }));
  return c;
}

const textOf = (r: unknown) => (r as CallToolResult).content.map((c) => (c.type === "text" ? c.text : "")).join("\n");

describe("codemux serve", () => {
  it("serves the built-in default (filesystem on the current directory, memory) to an SDK client", async () => {
    const c = await client([]);
    expect((await c.listTools()).tools.map((t) => t.name)).toContain("execute_code");
    expect(textOf(await c.callTool({ name: "search_tools", arguments: { query: "list a directory", limit: 3 } }))).toContain("fs__list_directory");
    expect(textOf(await c.callTool({ name: "call_tool", arguments: { name: "fs__read_text_file", args: { path: "notes.txt" } } }))).toBe(
      "alpha\nbeta\ngamma\n",
    );
    const graph = await c.callTool({
      name: "call_tool",
      arguments: { name: "memory__create_entities", args: { entities: [{ name: "codemux", entityType: "project", observations: ["a proxy"] }] } },
    });
    expect(graph.isError).toBeFalsy();
    const run = JSON.parse(
      textOf(
        await c.callTool({
          name: "execute_code",
          arguments: {
            code: 'import { readTextFile } from "mcp/servers/fs/readTextFile";\nconst { content } = await readTextFile({ path: "notes.txt" });\nexport default content.trim().split("\\n").map((l: string) => l.toUpperCase());',
          },
        }),
      ),
    );
    expect(run).toMatchObject({ result: ["ALPHA", "BETA", "GAMMA"], toolCalls: 1 });
  });

  it("serves the healthy servers when others are missing or exit at once", async () => {
    const config = join(dir, "mixed.json");
    await writeFile(
      config,
      JSON.stringify({
        mcpServers: {
          good: { command: process.execPath, args: [misbehavingServerPath] },
          missing: { command: "codemux-definitely-not-installed" },
          quitter: { command: process.execPath, args: [misbehavingServerPath, "--exit-at-start", "--stderr", "boom: missing token"] },
        },
      }),
    );
    const c = await client(["--config", config]);
    expect(textOf(await c.callTool({ name: "call_tool", arguments: { name: "good__echo", args: { text: "ok" } } }))).toBe("ok");
    const failed = await c.callTool({ name: "call_tool", arguments: { name: "quitter__echo", args: { text: "x" } } });
    expect(failed.isError).toBe(true);
    expect(textOf(failed)).toBe('Server "quitter" is unavailable: the process exited with code 3; stderr: boom: missing token');
    expect(textOf(await c.callTool({ name: "search_tools", arguments: { query: "echo", server: "missing" } }))).toMatch(
      /Server "missing" is unavailable: command not found/,
    );
    const listing = await codemux(["list", "--config", config]);
    expect(listing.code).toBe(1);
    expect(listing.stdout).toMatch(/good\s+ready/);
    expect(listing.stdout).toMatch(/missing\s+failed\s+0 tools\s+command not found: "codemux-definitely-not-installed"/);
    expect(listing.stdout).toMatch(/quitter\s+failed.*exited with code 3.*boom: missing token/);
  });

  it("on a terminal, prints client snippets that start this checkout's CLI by its path (codemux is not on npm yet)", async () => {
    const line = [process.execPath, cli, "--root", dir].map((word) => `'${word}'`).join(" ");
    // `script` gives codemux a terminal; Ctrl+C ends it once the banner is out.
    const child = spawn("script", ["-qfec", line, "/dev/null"], { cwd: dir, env: env() });
    let output = "";
    let stopped = false;
    child.stdin.on("error", () => undefined);
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk;
      // Once: the terminal echoes "^C", and a Ctrl+C for every echo floods the terminal until codemux has gone.
      if (!stopped && output.includes("press Ctrl+C to stop")) {
        stopped = true;
        child.stdin.write("\x03");
      }
    });
    await once(child, "close");
    const lines = output
      .replaceAll("\r", "")
      .split("\n")
      .map((l) => l.trim());
    const desktop = JSON.parse(lines.find((l) => l.startsWith('{"mcpServers"')) ?? "null") as { mcpServers: { codemux: unknown } } | null;
    expect(desktop?.mcpServers.codemux).toEqual({ command: process.execPath, args: [cli, "--root", dir] });
    expect(lines).toContain(`claude mcp add codemux -- ${process.execPath} ${cli} --root ${dir}`);
    expect(output).not.toContain("npx -y codemux");
    // Two real servers start before the banner: on a loaded 2-core machine that alone has taken 20 s.
  }, 60_000);

  it("takes servers inline after --", async () => {
    const c = await client(["serve", "--", "m", "--", process.execPath, misbehavingServerPath]);
    expect(textOf(await c.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: "inline" } } }))).toBe("inline");
  });

  it("answers JSON tables as TOON with --result-format toon, else with the config's resultFormat; an unknown format is a usage error", async () => {
    const rows = JSON.stringify([
      { name: "a", size: 1 },
      { name: "b", size: 2 },
    ]);
    const echo = { name: "call_tool", arguments: { name: "m__echo", args: { text: rows } } };
    const flag = await client(["serve", "--result-format", "toon", "--", "m", "--", process.execPath, misbehavingServerPath]);
    expect(textOf(await flag.callTool(echo))).toBe("[2]{name,size}:\n  a,1\n  b,2");
    await writeFile(
      join(dir, "toon.json"),
      JSON.stringify({ mcpServers: { m: { command: process.execPath, args: [misbehavingServerPath] } }, resultFormat: "toon" }),
    );
    const fromConfig = await client(["serve", "--config", "toon.json"]);
    expect(textOf(await fromConfig.callTool(echo))).toBe("[2]{name,size}:\n  a,1\n  b,2");
    await writeFile(
      join(dir, "xml.json"),
      JSON.stringify({ mcpServers: { m: { command: process.execPath, args: [misbehavingServerPath] } }, resultFormat: "xml" }),
    );
    const bad = await codemux(["list", "--config", "xml.json"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('resultFormat: expected "json" (results as the tools give them) or "toon"');
  });

  it("keeps results over --spill-bytes, else over the config's spillBytes, as handles; 0 and unlimited are usage errors", async () => {
    await writeFile(
      join(dir, "spill.json"),
      JSON.stringify({ mcpServers: { m: { command: process.execPath, args: [misbehavingServerPath] } }, spillBytes: 1024 }),
    );
    const echo = { name: "call_tool", arguments: { name: "m__echo", args: { text: "y".repeat(2000) } } };
    const fromConfig = await client(["serve", "--config", "spill.json"]);
    expect(textOf(await fromConfig.callTool(echo))).toMatch(/too large to show whole/);
    const fromFlag = await client(["serve", "--config", "spill.json", "--spill-bytes", "4096"]);
    expect(textOf(await fromFlag.callTool(echo))).toBe("y".repeat(2000));

    for (const bad of ["0", "unlimited", "1048577"]) {
      const refused = await codemux(["serve", "--config", "spill.json", "--spill-bytes", bad]);
      expect(refused).toMatchObject({
        code: 2,
        stderr: expect.stringContaining('a whole number of bytes from 1 to 1048576; larger results are kept as handles, so 0 and "unlimited" are not allowed'),
      });
    }
    await writeFile(join(dir, "spill-zero.json"), JSON.stringify({ mcpServers: {}, spillBytes: 0 }));
    const zero = await codemux(["serve", "--config", "spill-zero.json"]);
    expect(zero).toMatchObject({ code: 2, stderr: expect.stringContaining("spill-zero.json: spillBytes: expected a whole number of bytes from 1 to 1048576") });
  });

  it("runs a snippet in the background when serving and hands its result to jobs output", async () => {
    const c = await client(["--", "m", "--", process.execPath, misbehavingServerPath]);
    const names = (await c.listTools()).tools.map((t) => t.name);
    expect(names).toContain("jobs");
    // This client declared no sampling: the agent, which runs on the client's model, is not offered.
    expect(names).not.toContain("agent");
    const started = textOf(
      await c.callTool({
        name: "execute_code",
        arguments: { code: 'import { slow } from "mcp/servers/m/slow";\nexport default await slow({ ms: 300, steps: 2 });', background: true },
      }),
    );
    const id = /job_[0-9a-z]+/.exec(started)?.[0];
    expect(id).toBeDefined();
    const output = textOf(await c.callTool({ name: "jobs", arguments: { action: "output", ids: [id], block: true, wait_up_to: 20 } }));
    expect(output).toContain("completed");
    expect(output).toContain("slept 300 ms");
  });

  it("lists every downstream tool in passthrough mode", async () => {
    const c = await client(["--mode", "passthrough", "--", "m", "--", process.execPath, misbehavingServerPath]);
    const names = (await c.listTools()).tools.map((t) => t.name);
    expect(names).toContain("m__echo");
    expect(names).not.toContain("search_tools");
    expect(textOf(await c.callTool({ name: "m__echo", arguments: { text: "direct" } }))).toBe("direct");
  });

  it("answers malformed JSON-RPC on stdin with errors and keeps serving", async () => {
    const messages = [
      "this is not json",
      '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}',
      '{"jsonrpc":"2.0","method":"notifications/initialized"}',
      '{"broken": ',
      '{"jsonrpc":"2.0","id":2,"method":"tools/list"}',
    ];
    const { stdout } = await codemux(["--", "m", "--", process.execPath, misbehavingServerPath], { input: `${messages.join("\n")}\n` });
    const replies = stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { id?: number | null; result?: { tools?: unknown[] }; error?: { code: number } });
    expect(replies.filter((r) => r.error).map((r) => r.error!.code)).toEqual([-32700, -32700]);
    expect((replies.find((r) => r.id === 2)?.result?.tools as Array<{ name: string }>).map((t) => t.name)).toContain("execute_code");
  });
});

describe("codemux config errors", () => {
  it.each([
    ["syntax.json", '{\n  "mcpServers": {\n    "a": { "command": "x" },,\n  }\n}', /syntax\.json: JSON syntax error at line 3, column \d+/],
    ["field.json", JSON.stringify({ mcpServers: { fs: { command: "x", args: "not-a-list" } } }), /field\.json: mcpServers\.fs\.args: expected array/],
    ["empty.json", "{}", /empty\.json: top level: expected a "mcpServers"/],
  ])("%s fails with where, not a stack trace", async (file, content, pattern) => {
    await writeFile(join(dir, file), content);
    const result = await codemux(["list", "--config", file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(pattern);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it("refuses to let the built-in default serve the whole home folder unless asked", async () => {
    const child = spawn(process.execPath, [cli, "list"], { cwd: home, env: env() });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d));
    const [code] = await once(child, "close");
    expect(code).toBe(2);
    expect(stderr).toContain(`The built-in filesystem server would serve ${home} and everything under it. Give a project folder with --root DIR`);
    const rooted = await codemux(["list", "--root", dir]);
    expect(rooted.code).toBe(0);
  });

  it("says when the config file does not exist", async () => {
    const result = await codemux(["--config", "nope.json"]);
    expect(result).toMatchObject({ code: 2, stderr: expect.stringContaining("nope.json: the file does not exist") });
  });

  it.each([["skills", "list"], ["list"], ["policy", "check", "alice", "fs__read_file"]])("says so in `%s` too", async (...args) => {
    const result = await codemux([...args, "--config", "nope.json"]);
    expect(result).toMatchObject({ code: 2, stderr: expect.stringContaining("nope.json: the file does not exist") });
  });
});

describe("the config lookup", () => {
  it("reads codemux.json in codemux's home (what install writes) when there is no ./codemux.json, in list, search and auth status", async () => {
    const codemuxHome = await mkdtemp(join(tmpdir(), "codemux-lookup-home-"));
    await writeFile(
      join(codemuxHome, "codemux.json"),
      JSON.stringify({
        mcpServers: { installed: { command: process.execPath, args: [misbehavingServerPath] }, remote: { url: "http://127.0.0.1:9/mcp" } },
      }),
    );
    const lookup = { env: { CODEMUX_HOME: codemuxHome } };
    const listed = await codemux(["list"], lookup);
    expect(listed.stdout).toMatch(/^\s*installed\s+ready/m);
    expect(listed.stdout).not.toMatch(/^\s*fs\s/m);
    expect((await codemux(["search", "echo", "--limit", "1"], lookup)).stdout).toContain("installed__echo");
    expect((await codemux(["auth", "status"], lookup)).stdout).toBe("remote  not logged in (run codemux auth login remote if it answers 401)\n");

    const project = join(dir, "project-with-config");
    await mkdir(project, { recursive: true });
    await writeFile(join(project, "codemux.json"), JSON.stringify({ mcpServers: { local: { command: process.execPath, args: [misbehavingServerPath] } } }));
    const local = await codemux(["list"], { ...lookup, cwd: project });
    expect(local).toMatchObject({ code: 0 });
    expect(local.stdout).toMatch(/^\s*local\s+ready/m);
    expect(local.stdout).not.toContain("installed");
    await rm(codemuxHome, { recursive: true, force: true });
  });
});

describe("config forms", () => {
  it("reads a single-server file named after the file, and VS Code's .vscode/mcp.json with comments, trailing commas and ${workspaceFolder}", async () => {
    await writeFile(join(dir, "ev-server.json"), JSON.stringify({ type: "stdio", command: process.execPath, args: [misbehavingServerPath] }));
    const single = await codemux(["list", "--json", "--config", "ev-server.json"]);
    expect(single).toMatchObject({ code: 0 });
    expect((JSON.parse(single.stdout) as Array<{ name: string; state: string }>).map((s) => [s.name, s.state])).toEqual([["ev-server", "ready"]]);

    const project = join(dir, "vscode-project");
    await mkdir(join(project, ".vscode"), { recursive: true });
    await writeFile(join(project, "server.mjs"), `await import(${JSON.stringify(pathToFileURL(misbehavingServerPath).href)});\n`);
    await writeFile(
      join(project, ".vscode", "mcp.json"),
      `{\n  // VS Code writes JSONC\n  "servers": {\n    "ws": { "command": ${JSON.stringify(process.execPath)}, "args": ["\${workspaceFolder}/server.mjs",], },\n  },\n}\n`,
    );
    const vscode = await codemux(["list", "--json", "--config", ".vscode/mcp.json"], { cwd: project });
    expect(vscode).toMatchObject({ code: 0 });
    expect((JSON.parse(vscode.stdout) as Array<{ name: string; state: string }>).map((s) => [s.name, s.state])).toEqual([["ws", "ready"]]);
  });
});

describe("codemux commands", () => {
  it("search, call and list print what a user needs", async () => {
    const search = await codemux(["search", "read", "a", "file", "--limit", "2"]);
    expect(search.stdout).toContain("fs__read_");
    // The value a snippet gets: the filesystem server declares an output schema, so its structured content.
    const call = await codemux(["call", "fs__read_text_file", '{"path":"notes.txt","head":1}']);
    expect(call).toMatchObject({ code: 0 });
    expect(JSON.parse(call.stdout)).toEqual({ content: "alpha" });
    const bad = await codemux(["call", "fs__read_text_file", "{oops"]);
    expect(bad).toMatchObject({ code: 2, stderr: expect.stringContaining("not valid JSON") });
    // A mistyped name: the CLI's own way to find tools, not a meta-tool's.
    const typo = await codemux(["call", "fs__read_txt_file", "{}"]);
    expect(typo.code).toBe(1);
    expect(typo.stdout + typo.stderr).toMatch(/No tool named "fs__read_txt_file"\. .*; codemux search finds them\./);
    const json = JSON.parse((await codemux(["list", "--json"])).stdout) as Array<{ name: string; state: string }>;
    expect(json.map((s) => [s.name, s.state])).toEqual([
      ["fs", "ready"],
      ["memory", "ready"],
    ]);
  });

  it("exec runs a snippet from stdin and reports errors with their line", async () => {
    const ok = await codemux(["exec", "-"], { input: "const n: number = 21;\nexport default n * 2;\n" });
    expect(JSON.parse(ok.stdout)).toMatchObject({ result: 42 });
    const bad = await codemux(["exec", "-"], { input: "const a = 1;\nthrow new Error('line two');\n" });
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout).error).toMatchObject({ kind: "runtime", line: 2 });
  });

  it("exec --keep-bundle keeps the snippet, its bundle and source map; CODEMUX_DEBUG_EXEC=1 does the same in codemux's folder", async () => {
    const keep = join(dir, "kept");
    const ok = await codemux(["exec", "-", "--keep-bundle", keep], { input: "const n: number = 2;\nexport default n;\n" });
    expect(JSON.parse(ok.stdout)).toMatchObject({ result: 2 });
    const [run] = await readdir(keep);
    expect((await readdir(join(keep, run!))).sort()).toEqual(["bundle.mjs", "bundle.mjs.map", "entry.ts"]);
    expect(await readFile(join(keep, run!, "entry.ts"), "utf8")).toContain("const n: number = 2;");
    await codemux(["exec", "-"], { input: "export default 3;\n", env: { CODEMUX_DEBUG_EXEC: "1" } });
    expect(await readdir(join(home, ".codemux", "debug", "exec"))).toHaveLength(1);
  });

  it("codegen writes modules that type-check with tsc", async () => {
    const out = join(dir, "generated");
    const result = await codemux(["codegen", "--out", out]);
    expect(result.stdout).toMatch(/^Wrote \d+ files for \d+ tools of 2 servers/);
    expect(await readdir(join(out, "servers"))).toEqual(["fs", "memory"]);
    expect(await readFile(join(out, "servers/fs/readTextFile.ts"), "utf8")).toContain("export async function readTextFile(");
    // The written tree names its zod in package.json; link the workspace's one as `npm install` would fetch it.
    await mkdir(join(out, "node_modules"), { recursive: true });
    await symlink(dirname(require.resolve("zod/package.json")), join(out, "node_modules", "zod"), "dir");
    await run(process.execPath, [tsc, "--noEmit", "-p", out]);
    expect(await readFile(join(out, "tsconfig.json"), "utf8")).not.toContain(dir);
  });

  it("skips a config entry that is codemux itself and goes on: list shows it once and exits 0, serve warns once", async () => {
    const file = join(dir, "client-config.json");
    await writeFile(
      file,
      JSON.stringify({
        mcpServers: { codemux: { command: process.execPath, args: [cli, "--config", file] }, m: { command: process.execPath, args: [misbehavingServerPath] } },
      }),
    );
    const result = await codemux(["list", "--config", file]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/m\s+ready/);
    expect(result.stdout).toMatch(/codemux\s+skipped\s+0 tools\s+it starts codemux itself .* it is skipped, and the other servers are served$/m);
    expect(`${result.stdout}${result.stderr}`.match(/codemux itself/g)).toHaveLength(1);
    const served = await codemux(["--config", file], {
      input: `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } })}\n${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" })}\n`,
    });
    expect(served.code).toBe(0);
    expect(served.stderr.match(/codemux itself/g)).toHaveLength(1);
  });

  it("prints each failure of list once: in the table, not also on stderr", async () => {
    const file = join(dir, "failing-config.json");
    await writeFile(file, JSON.stringify({ mcpServers: { quitter: { command: process.execPath, args: [misbehavingServerPath, "--exit-at-start"] } } }));
    const result = await codemux(["list", "--config", file]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/quitter\s+failed\s+0 tools\s+the process exited with code 3/);
    expect(result.stderr).toBe("");
  });

  it("runs the config's plugins on calls (audit writes a line, guard refuses a denied tool)", async () => {
    const file = join(dir, "plugins-config.json");
    const audit = join(dir, "audit.jsonl");
    await writeFile(
      file,
      JSON.stringify({
        mcpServers: { m: { command: process.execPath, args: [misbehavingServerPath] } },
        plugins: { audit: { file: audit }, guard: { deny: ["m__crash"] } },
      }),
    );
    expect(await codemux(["call", "m__echo", '{"text":"hi"}', "--config", file])).toMatchObject({ code: 0, stdout: "hi\n" });
    const refused = await codemux(["call", "m__crash", "{}", "--config", file]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain("denied by the guard plugin");
    const lines = (await readFile(audit, "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { tool: string; outcome: string; origin: string });
    expect(lines.map((l) => `${l.origin}:${l.tool}:${l.outcome}`)).toEqual(["cli:echo:ok", "cli:crash:refused"]);
  });

  it("tells a server that asks for its roots --root (never a client's), and no roots without it when a config is given", async () => {
    const file = join(dir, "roots-config.json");
    await writeFile(file, JSON.stringify({ mcpServers: { ask: { command: process.execPath, args: [askingServerPath] } } }));
    const told = await codemux(["call", "ask__roots", "{}", "--config", file, "--root", "project"]);
    expect(told).toMatchObject({ code: 0 });
    expect(JSON.parse(told.stdout)).toEqual({ roots: [{ uri: pathToFileURL(join(dir, "project")).href }] });
    expect(JSON.parse((await codemux(["call", "ask__roots", "{}", "--config", file])).stdout)).toEqual({ roots: [] });
  });

  it("warns about unknown keys in the config with a suggestion", async () => {
    const file = join(dir, "typo-config.json");
    await writeFile(file, JSON.stringify({ mcpServers: { m: { command: process.execPath, args: [misbehavingServerPath], callTimeoutMS: 5 } } }));
    const result = await codemux(["list", "--config", file]);
    expect(result.stderr).toMatch(/callTimeoutMS.*did you mean "callTimeoutMs"/);
  });

  it("logs every call at debug level, set from CODEMUX_LOG_LEVEL", async () => {
    const result = await codemux(["call", "fs__list_directory", '{"path":"."}'], { env: { CODEMUX_LOG_LEVEL: "debug" } });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/call fs__list_directory \(cli\) ok in \d+ ms/);
  });

  it("takes CODEMUX_CATALOG_CACHE_TTL_MS as milliseconds, and a bad value is a usage error", async () => {
    expect((await codemux(["list"], { env: { CODEMUX_CATALOG_CACHE_TTL_MS: "86400000" } })).code).toBe(0);
    const bad = await codemux(["list"], { env: { CODEMUX_CATALOG_CACHE_TTL_MS: "a day" } });
    expect(bad).toMatchObject({ code: 2, stderr: expect.stringContaining('CODEMUX_CATALOG_CACHE_TTL_MS is "a day"; give milliseconds') });
  });

  it("says which command was meant for a typo, and exits 2 on usage errors", async () => {
    const typo = await codemux(["lst"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('unknown command "lst", did you mean `list`?');
    expect((await codemux(["search"])).code).toBe(2);
    expect((await codemux(["--mode", "nope"])).code).toBe(2);
  });

  it("serve --help shows its options and the inline server syntax", async () => {
    const { stdout, code } = await codemux(["serve", "--help"]);
    expect(code).toBe(0);
    expect(stdout).toContain("codemux serve -- fs -- npx -y @modelcontextprotocol/server-filesystem .");
    expect(stdout).toContain("--transport http|sse URL");
  });

  it("every command's --help, nested ones too, says that --config (and the other global options) work there", async () => {
    const globalConfig = (help: string) => /\nGlobal Options:\n[\s\S]*^ {2}-c, --config <file> /m.test(help);
    for (const words of [["list"], ["skills", "list"]]) expect(globalConfig((await codemux([...words, "--help"])).stdout), words.join(" ")).toBe(true);
    // Every other command the same way, in this process: the help the CLI prints is commander's helpInformation().
    const all = (command: Command): Command[] => command.commands.flatMap((sub) => [sub, ...all(sub)]);
    const commands = all(buildProgram({ inline: [], stdout: process.stdout, exitCode: 0 }));
    expect(commands.length).toBeGreaterThan(20);
    for (const command of commands) expect(globalConfig(command.helpInformation()), command.name()).toBe(true);
  });

  it("the README's option table names every --mode that --help offers", async () => {
    const help = (await codemux(["--help"])).stdout.replace(/\s+/g, " ");
    const choices = [.../--mode <mode>.*?\(choices: ([^)]*?), default/.exec(help)![1]!.matchAll(/"(\w+)"/g)].map((m) => m[1]);
    expect(choices).toEqual(["code", "passthrough", "dispatch"]);
    const row = (await readFile(resolve(import.meta.dirname, "../README.md"), "utf8")).split("\n").find((line) => line.startsWith("| `-m, --mode"));
    expect(row).toContain(`--mode ${choices.join("\\|")}`);
  });

  it("--help explains the commands and the config", async () => {
    const { stdout, code } = await codemux(["--help"]);
    expect(code).toBe(0);
    for (const word of [
      "serve",
      "list",
      "search",
      "call",
      "exec",
      "codegen",
      "--config",
      "$CODEMUX_CONFIG",
      "./codemux.json",
      "~/.codemux/codemux.json",
      "built-in",
      // Every switch the README's environment list names for debugging.
      "CODEMUX_CALL_LANE=0",
      "CODEMUX_SERVER_LANE=0",
      "CODEMUX_SANDBOX_FAST_PATH=0",
      "CODEMUX_JSON_ANSWERS=0",
    ])
      expect(stdout).toContain(word);
  });
});
