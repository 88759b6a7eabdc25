import { misbehavingServerPath } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { ChildProcess } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, serveCli } from "./serve-cli";

const TOKEN = "laptop:cli-test-token-0123456789";
const SECRET = "cli-test-token-0123456789";

let dir: string;
let home: string;
let configFile: string;
const started: ChildProcess[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "codemux-http-cli-"));
  home = await mkdtemp(join(tmpdir(), "codemux-http-home-"));
  configFile = join(dir, "codemux.json");
  await writeFile(configFile, JSON.stringify({ mcpServers: { m: { command: process.execPath, args: [misbehavingServerPath] } } }));
});
afterAll(async () => {
  for (const child of started) if (child.exitCode === null) child.kill("SIGKILL");
  await run(["stop", "--config", configFile]);
});

const env = (extra: Record<string, string> = {}) => ({ PATH: process.env.PATH ?? "", HOME: home, CODEMUX_HOME: join(home, ".codemux"), ...extra });

function run(args: string[], extra: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return runCli(args, { cwd: dir, env: env(extra) });
}

/** Starts `codemux serve --http` in the foreground; resolves with its URL once it says it serves. */
function serveHttp(args: string[], extra: Record<string, string> = {}): Promise<{ child: ChildProcess; url: string; stderr: () => string }> {
  return serveCli(["serve", "--http", ":0", "--config", configFile, ...args], { cwd: dir, env: env(extra), started });
}

const textOf = (r: unknown) => ((r as CallToolResult).content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("\n");

describe("codemux serve --http", () => {
  it("serves MCP and REST with a token from $CODEMUX_TOKEN, logs JSON lines without the token, and stops cleanly on SIGTERM", async () => {
    const { child, url, stderr } = await serveHttp([], { CODEMUX_TOKEN: TOKEN });
    const client = new Client({ name: "cli-http", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${SECRET}` } } }));
    expect(textOf(await client.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: "remote" } } }))).toBe("remote");
    await client.close();
    expect((await fetch(`${url}/v1/tools?q=echo`)).status).toBe(401);
    const rest = await fetch(`${url}/v1/tools/m__echo/call?apikey=${SECRET}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"text":"r"}',
    });
    expect(await rest.json()).toEqual({ tool: "m__echo", value: "r" });
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    const lines = stderr()
      .split("\n")
      .filter((l) => l.startsWith("{"));
    expect(
      lines.map((l) => JSON.parse(l) as Record<string, unknown>).some((l) => l.principal === "laptop" && l.path === "/v1/tools/m__echo/call?apikey=***"),
    ).toBe(true);
    expect(stderr()).not.toContain(SECRET);
  });

  it("--log-level warn leaves the access log out; the default keeps it", async () => {
    const requestLines = (text: string) => text.split("\n").filter((l) => l.startsWith("{") && (JSON.parse(l) as { msg?: string }).msg === "request");
    for (const [args, expected] of [
      [["--log-level", "warn"], 0],
      [[], 1],
    ] as const) {
      const { child, url, stderr } = await serveHttp([...args], { CODEMUX_TOKEN: TOKEN });
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
      expect(requestLines(stderr()).length).toBe(expected);
    }
  });

  it("refuses a non-loopback bind without a token (exit 2), and HTTP flags without --http", async () => {
    const open = await run(["serve", "--http", "0.0.0.0:0", "--config", configFile]);
    expect(open.code).toBe(2);
    expect(open.stderr).toContain("refusing to serve 0.0.0.0:0 without a token");
    const stray = await run(["serve", "--stateless", "--config", configFile]);
    expect(stray.code).toBe(2);
    expect(stray.stderr).toContain("--stateless needs --http");
    const weak = await run(["serve", "--http", ":0", "--token", "short", "--config", configFile]);
    expect(weak.code).toBe(2);
    expect(weak.stderr).toMatch(/8 to 4096/);
  });

  it("--detach runs in the background; status, a second start, restart and stop behave", async () => {
    const start = await run(["serve", "--http", ":0", "--detach", "--config", configFile, "--token", TOKEN]);
    expect(start.code).toBe(0);
    const url = /serving (http:\/\/\S+)\/mcp/.exec(start.stdout)?.[1] as string;
    expect((await fetch(`${url}/healthz`)).status).toBe(200);

    const status = await run(["status", "--json", "--config", configFile]);
    expect(status.code).toBe(0);
    const [info] = JSON.parse(status.stdout) as Array<{ pid: number; url: string; state: string }>;
    expect(info).toMatchObject({ url, state: "running" });

    const again = await run(["serve", "--http", ":0", "--detach", "--config", configFile, "--token", TOKEN]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("already serves this config");

    const restarted = await run(["restart", "--config", configFile]);
    expect(restarted.code).toBe(0);
    const after = JSON.parse((await run(["status", "--json", "--config", configFile])).stdout) as Array<{ pid: number }>;
    expect(after[0]?.pid).not.toBe(info?.pid);

    const stop = await run(["stop", "--config", configFile]);
    expect(stop.code).toBe(0);
    const gone = await run(["status", "--config", configFile]);
    expect(gone.code).toBe(3);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });
});
