import { misbehavingServerPath, modernServerPath, until } from "@codemux/test-servers";
import { Client as ModernClient } from "@modelcontextprotocol/client";
import { StdioClientTransport as ModernStdio } from "@modelcontextprotocol/client/stdio";
import { StreamableHTTPClientTransport as ModernHttp } from "@modelcontextprotocol/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as LegacyStdio } from "@modelcontextprotocol/sdk/client/stdio.js";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveCli } from "./serve-cli";
import { cli } from "./run-cli";

let dir: string;
let config: string;
let starts: string;
let env: Record<string, string>;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "codemux-eras-"));
  config = join(dir, "codemux.json");
  starts = join(dir, "starts.txt");
  // The downstream server notes each start, so a test can tell whether a process of codemux started it.
  const command = `echo $$ >> '${starts}'; exec '${process.execPath}' '${misbehavingServerPath}' --name a`;
  await writeFile(config, JSON.stringify({ mcpServers: { a: { command: "sh", args: ["-c", command] } } }));
  env = { PATH: process.env.PATH ?? "", HOME: dir, CODEMUX_HOME: join(dir, ".codemux") };
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const textOf = (result: object) =>
  (((result as { content?: unknown }).content ?? []) as Array<{ type: string; text?: string }>).map((c) => (c.type === "text" ? c.text : "")).join("\n");
const startCount = async () => (await readFile(starts, "utf8").catch(() => "")).split("\n").filter(Boolean).length;

describe("serve over stdio, both protocol eras", () => {
  it("serves an SDK v2 client in auto mode as 2026-07-28, and its probe copy starts no server and opens no jobs journal", async () => {
    await rm(starts, { force: true });
    const transport = new ModernStdio({ command: process.execPath, args: [cli, "--config", config], cwd: dir, env, stderr: "pipe" });
    const client = new ModernClient({ name: "modern", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
    await client.connect(transport);
    try {
      expect(client.getProtocolEra()).toBe("modern");
      expect(client.getInstructions()).toMatch(/codemux connects you to many MCP servers' tools.*Servers: a\./);
      expect((await client.listTools()).tools.map((t) => t.name)).toContain("search_tools");
      const echoed = await client.callTool({ name: "call_tool", arguments: { name: "a__echo", args: { text: "from 2026" } } });
      expect(textOf(echoed)).toContain("from 2026");
      // Two processes of codemux ran (the probe copy, then the one serving); only the serving one started the server.
      expect(await startCount()).toBe(1);
      // The probe copy opened no journal: one process's segment only.
      const segments = (await readdir(join(dir, ".codemux", "jobs")).catch(() => [] as string[])).filter((f) => f.endsWith(".jsonl"));
      expect(segments.length).toBeLessThanOrEqual(1);
    } finally {
      await client.close();
    }
  });

  it("still serves an SDK 1.x client (initialize, 2025-11-25) on the same command", async () => {
    const transport = new LegacyStdio({ command: process.execPath, args: [cli, "--config", config], cwd: dir, env, stderr: "pipe" });
    const client = new LegacyClient({ name: "legacy", version: "1.0.0" });
    await client.connect(transport);
    try {
      expect(client.getServerVersion()?.name).toBe("codemux");
      const echoed = await client.callTool({ name: "call_tool", arguments: { name: "a__echo", args: { text: "from 2025" } } });
      expect(textOf(echoed)).toContain("from 2025");
    } finally {
      await client.close();
    }
  });

  it("tells a client at its first exchange what the servers said about their tools last time (the catalog cache)", async () => {
    const file = join(dir, "instructions.json");
    const server = { command: process.execPath, args: [misbehavingServerPath, "--name", "notes", "--instructions", "Call echo first."] };
    await writeFile(file, JSON.stringify({ mcpServers: { notes: server } }));
    const session = async () => {
      const client = new LegacyClient({ name: "legacy", version: "1.0.0" });
      await client.connect(new LegacyStdio({ command: process.execPath, args: [cli, "--config", file], cwd: dir, env, stderr: "pipe" }));
      // A call waits for the server: by the end of the first session it has said its instructions, and they are cached.
      await client.callTool({ name: "call_tool", arguments: { name: "notes__echo", args: { text: "x" } } });
      const text = client.getInstructions();
      await client.close();
      return text;
    };
    expect(await session()).not.toContain("[notes]");
    // The first codemux writes its catalog cache as it ends.
    const cache = join(dir, ".codemux", "cache");
    const cached = async () => {
      for (const f of await readdir(cache).catch(() => [] as string[])) if ((await readFile(join(cache, f), "utf8")).includes("Call echo first.")) return true;
      return false;
    };
    await until(cached);
    expect(await session()).toContain("[notes] Call echo first.");
  });

  it("answers a modern server/discover probe at once and exits on end of input having started nothing", async () => {
    await rm(starts, { force: true });
    const { spawn } = await import("node:child_process");
    const child = spawn(process.execPath, [cli, "--config", config], { cwd: dir, env });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d));
    const meta = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {},
      "io.modelcontextprotocol/clientInfo": { name: "probe", version: "1" },
    };
    child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta: meta } })}\n`);
    await new Promise<void>((resolve) => child.stdout.on("data", () => out.includes("\n") && resolve()));
    child.stdin.end();
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    const answer = JSON.parse(out.split("\n")[0] ?? "{}") as { result?: { supportedVersions?: string[]; instructions?: string } };
    expect(answer.result?.supportedVersions).toContain("2026-07-28");
    expect(answer.result?.instructions).toMatch(/Servers: a\./);
    expect(code).toBe(0);
    expect(await startCount()).toBe(0);
  });
});

describe("one config with a 2026-only server and a 2025 one, through every surface", () => {
  const started: ChildProcess[] = [];
  afterAll(() => {
    for (const child of started) child.kill("SIGTERM");
  });
  const mixed = async () => {
    const file = join(dir, "mixed.json");
    await writeFile(
      file,
      JSON.stringify({
        mcpServers: {
          new: { command: process.execPath, args: [modernServerPath, "--legacy", "reject"] },
          old: { command: process.execPath, args: [misbehavingServerPath, "--name", "old"] },
        },
      }),
    );
    return file;
  };
  const era = (text: string) => (JSON.parse(text) as { era: string }).era;

  it("serves a 2026 client and a 2025 one over HTTP: search, call_tool, execute_code, a job and REST reach both servers, each in its own era", async () => {
    const file = await mixed();
    const token = "eras-test-token-0123456789";
    const { url } = await serveCli(["serve", "--http", "127.0.0.1:0", "--config", file, "--token", token], {
      cwd: dir,
      env: { ...env, CODEMUX_HOME: join(dir, ".codemux-http") },
      started,
    });
    const headers = { authorization: `Bearer ${token}` };
    const modern = new ModernClient({ name: "modern", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
    await modern.connect(new ModernHttp(new URL(`${url}/mcp`), { requestInit: { headers } }));
    try {
      expect(modern.getProtocolEra()).toBe("modern");
      const found = textOf(await modern.callTool({ name: "search_tools", arguments: { query: "report the era", limit: 3 } }));
      expect(found).toContain("new__whoami");
      expect(era(textOf(await modern.callTool({ name: "call_tool", arguments: { name: "new__whoami", args: {} } })))).toBe("modern");
      expect(textOf(await modern.callTool({ name: "call_tool", arguments: { name: "old__echo", args: { text: "to 2025" } } }))).toBe("to 2025");
      const code = [
        'import { whoami } from "mcp/servers/new/whoami";',
        'import { echo } from "mcp/servers/old/echo";',
        "const me = await whoami({});",
        'const back = await echo({ text: "chained" });',
        "export default { me, back };",
      ].join("\n");
      const chained = textOf(await modern.callTool({ name: "execute_code", arguments: { code } }));
      expect(chained).toMatch(/"era": ?"modern"/);
      expect(chained).toContain("chained");
      // A background job calls the 2026 server too, and its output is the caller's.
      const started = textOf(await modern.callTool({ name: "call_tool", arguments: { name: "new__whoami", args: {}, background: true } }));
      const id = /job_[0-9a-f]{12}/.exec(started)?.[0] ?? "";
      expect(id).not.toBe("");
      expect(textOf(await modern.callTool({ name: "jobs", arguments: { action: "output", ids: [id] } }))).toContain("modern");
    } finally {
      await modern.close();
    }
    const rest = await fetch(`${url}/v1/tools/new__whoami/call`, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: "{}" });
    expect(rest.status).toBe(200);
    expect(JSON.stringify(await rest.json())).toContain("modern");
  });

  it("serves the same config over stdio in passthrough and dispatch modes to a 2025 client", async () => {
    const file = await mixed();
    for (const mode of ["passthrough", "dispatch"]) {
      const client = new LegacyClient({ name: "legacy", version: "1.0.0" });
      await client.connect(
        new LegacyStdio({
          command: process.execPath,
          args: [cli, "--config", file, "--mode", mode],
          cwd: dir,
          env: { ...env, CODEMUX_HOME: join(dir, `.codemux-${mode}`) },
          stderr: "pipe",
        }),
      );
      try {
        const whoami =
          mode === "passthrough"
            ? await client.callTool({ name: "new__whoami", arguments: {} })
            : await client.callTool({ name: "codemux", arguments: { action: "call", tool: "new__whoami", arguments: {} } });
        expect(textOf(whoami)).toContain("modern");
        const echoed =
          mode === "passthrough"
            ? await client.callTool({ name: "old__echo", arguments: { text: "x" } })
            : await client.callTool({ name: "codemux", arguments: { action: "call", tool: "old__echo", arguments: { text: "x" } } });
        expect(textOf(echoed)).toContain("x");
      } finally {
        await client.close();
      }
    }
  });
});
