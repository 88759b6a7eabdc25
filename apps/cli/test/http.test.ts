import { misbehavingServerPath } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { ChildProcess } from "node:child_process";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pidfilePath } from "../src/commands/daemon";
import { runCli } from "./run-cli";
import { serveCli } from "./serve-cli";

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

const run = (args: string[], extra: Record<string, string> = {}) => runCli(args, { cwd: dir, env: env(extra) });

/** Starts `codemux serve --http` in the foreground; resolves with its URL once it says it serves. */
function serveHttp(args: string[], extra: Record<string, string> = {}): Promise<{ child: ChildProcess; url: string; stderr: () => string }> {
  return serveCli(["serve", "--http", ":0", "--config", configFile, ...args], { cwd: dir, env: env(extra), started });
}

/** A port no one listens on now. */
async function freePort(): Promise<number> {
  const server = createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, "close");
  return port;
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
      lines.map((l) => JSON.parse(l) as Record<string, unknown>).some((l) => l.principal === "token:laptop" && l.path === "/v1/tools/m__echo/call?apikey=***"),
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

  it("publishes OAuth metadata with --public-url and --oauth-issuer, and re-reads --token-file when it changes", async () => {
    const tokenFile = join(dir, "reloaded-tokens.json");
    await writeFile(tokenFile, JSON.stringify([{ name: "laptop", token: SECRET, scopes: ["admin"] }]));
    const issuer = "https://login.example.com";
    const { child, url } = await serveHttp(["--token-file", tokenFile, "--public-url", "https://codemux.example.com", "--oauth-issuer", issuer]);
    try {
      expect(await (await fetch(`${url}/.well-known/oauth-protected-resource/mcp`)).json()).toMatchObject({
        resource: "https://codemux.example.com/mcp",
        authorization_servers: [issuer],
      });
      const refused = await fetch(`${url}/mcp`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      expect(refused.headers.get("www-authenticate")).toBe('Bearer resource_metadata="https://codemux.example.com/.well-known/oauth-protected-resource/mcp"');
      const later = "later-token-0123456789";
      await writeFile(
        tokenFile,
        JSON.stringify([
          { name: "laptop", token: SECRET, scopes: ["admin"] },
          { name: "later", token: later, scopes: ["metrics"] },
        ]),
      );
      let status = 0;
      for (let i = 0; i < 200 && status !== 200; i++) {
        status = (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${later}` } })).status;
        if (status !== 200) await new Promise((r) => setTimeout(r, 50));
      }
      expect(status).toBe(200);
      expect((await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${SECRET}` } })).status).toBe(403);
    } finally {
      child.kill("SIGTERM");
      await once(child, "exit");
    }
    const half = await run(["serve", "--http", ":0", "--config", configFile, "--oauth-issuer", issuer]);
    expect(half).toMatchObject({ code: 2, stderr: expect.stringContaining("OAuth needs the URL clients reach codemux at: set --public-url") });
    const pathed = await run(["serve", "--http", ":0", "--config", configFile, "--public-url", "https://example.com/codemux", "--oauth-issuer", issuer]);
    expect(pathed).toMatchObject({ code: 2, stderr: expect.stringContaining('publicUrl "https://example.com/codemux" must be an http(s) origin') });
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

  it("listens where CODEMUX_HOST and CODEMUX_PORT say; each part --http gives wins; a bad value or an open host without a token exits 2", async () => {
    const fromEnv = await serveCli(["serve", "--http", "--config", configFile], {
      cwd: dir,
      env: env({ CODEMUX_HOST: "127.0.0.2", CODEMUX_PORT: "0" }),
      started,
    });
    expect(fromEnv.url).toMatch(/^http:\/\/127\.0\.0\.2:\d+$/);
    expect(fromEnv.url).not.toMatch(/:3920$/);
    expect((await fetch(`${fromEnv.url}/healthz`)).status).toBe(200);
    fromEnv.child.kill("SIGTERM");
    const flagHost = await serveCli(["serve", "--http", "127.0.0.1", "--config", configFile], {
      cwd: dir,
      env: env({ CODEMUX_HOST: "127.0.0.2", CODEMUX_PORT: "0" }),
      started,
    });
    expect(flagHost.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(flagHost.url).not.toMatch(/:3920$/);
    flagHost.child.kill("SIGTERM");

    const badPort = await run(["serve", "--http", "--config", configFile], { CODEMUX_PORT: "http" });
    expect(badPort).toMatchObject({ code: 2, stderr: expect.stringContaining('CODEMUX_PORT is "http"; give a port number from 0 to 65535') });
    const badHost = await run(["serve", "--http", "--config", configFile], { CODEMUX_HOST: "0.0.0.0:8080" });
    expect(badHost).toMatchObject({ code: 2, stderr: expect.stringContaining('CODEMUX_HOST is "0.0.0.0:8080"; give a host name or address without a port') });
    const open = await run(["serve", "--http", "--config", configFile], { CODEMUX_HOST: "0.0.0.0", CODEMUX_PORT: "0" });
    expect(open).toMatchObject({ code: 2, stderr: expect.stringContaining("refusing to serve 0.0.0.0:0 without a token") });
  });

  it("restart listens at the address CODEMUX_HOST and CODEMUX_PORT gave the daemon, whatever the restarting shell sets", async () => {
    const config = join(dir, "listen-env.json");
    await writeFile(config, JSON.stringify({ mcpServers: {} }));
    const tokenFile = join(dir, "listen-env-tokens.txt");
    await writeFile(tokenFile, `${TOKEN}\n`);
    const port = await freePort();
    const start = await run(["serve", "--http", "--detach", "--config", config, "--token-file", tokenFile], {
      CODEMUX_HOST: "127.0.0.1",
      CODEMUX_PORT: String(port),
    });
    expect(start.code).toBe(0);
    const urlOf = async () => (JSON.parse((await run(["status", "--json", "--config", config])).stdout) as Array<{ url: string }>)[0]?.url;
    try {
      expect(await urlOf()).toBe(`http://127.0.0.1:${port}`);
      expect((await run(["restart", "--config", config], { CODEMUX_HOST: "127.0.0.2", CODEMUX_PORT: "0" })).code).toBe(0);
      expect(await urlOf()).toBe(`http://127.0.0.1:${port}`);
    } finally {
      expect((await run(["stop", "--config", config])).code).toBe(0);
    }
  });

  it("--detach runs in the background; status, a second start, restart and stop behave", async () => {
    const tokenFile = join(dir, "tokens.txt");
    await writeFile(tokenFile, `${TOKEN}\n`);
    const start = await run(["serve", "--http", ":0", "--detach", "--config", configFile, "--token-file", tokenFile]);
    expect(start.code).toBe(0);
    const url = /serving (http:\/\/\S+)\/mcp/.exec(start.stdout)?.[1] as string;
    expect((await fetch(`${url}/healthz`)).status).toBe(200);

    const status = await run(["status", "--json", "--config", configFile]);
    expect(status.code).toBe(0);
    const [info] = JSON.parse(status.stdout) as Array<{ pid: number; url: string; state: string }>;
    expect(info).toMatchObject({ url, state: "running" });

    const again = await run(["serve", "--http", ":0", "--detach", "--config", configFile, "--token-file", tokenFile]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("already serves this config");

    // A token in this shell that the server was not started with is not added by a restart.
    const restarted = await run(["restart", "--config", configFile], { CODEMUX_TOKEN: "intruder:intruder-token-0123" });
    expect(restarted.code).toBe(0);
    const after = JSON.parse((await run(["status", "--json", "--config", configFile])).stdout) as Array<{ pid: number; url: string }>;
    expect(after[0]?.pid).not.toBe(info?.pid);
    // Started on :0, it keeps the port it was given.
    expect(after[0]?.url).toBe(url);
    expect((await fetch(`${after[0]?.url}/v1/tools`, { headers: { authorization: `Bearer ${SECRET}` } })).status).toBe(200);
    expect((await fetch(`${after[0]?.url}/v1/tools`, { headers: { authorization: "Bearer intruder-token-0123" } })).status).toBe(401);

    const stop = await run(["stop", "--config", configFile]);
    expect(stop.code).toBe(0);
    const gone = await run(["status", "--config", configFile]);
    expect(gone.code).toBe(3);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });

  it("keeps tokens out of the run file, status --json and ps; a restart without the token's source refuses and leaves the server running", async () => {
    const start = await run(["serve", "--http", ":0", "--detach", "--config", configFile, "--token", TOKEN]);
    expect(start.code).toBe(0);
    const pidfile = pidfilePath(configFile, join(home, ".codemux"));
    const info = JSON.parse(await readFile(pidfile, "utf8")) as { pid: number; url: string; auth: unknown };
    expect(info.auth).toEqual({ flags: 1, tokenFile: null, env: null });
    const status = await run(["status", "--json", "--config", configFile]);
    for (const seen of [await readFile(pidfile, "utf8"), status.stdout, await readFile(`/proc/${info.pid}/cmdline`, "utf8")])
      expect(seen).not.toContain(SECRET);
    expect((await fetch(`${info.url}/v1/tools`)).status).toBe(401);

    const refused = await run(["restart", "--config", configFile]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `codemux: not restarting the background server (pid ${info.pid}, still running): it was started with a token given as --token`,
    );
    expect((await fetch(`${info.url}/v1/tools`, { headers: { authorization: `Bearer ${SECRET}` } })).status).toBe(200);
    expect((await run(["stop", "--config", configFile])).code).toBe(0);
  });

  it("restart keeps $CODEMUX_TOKEN: refused in a shell without it (the server keeps running with auth), done in one with it", async () => {
    const start = await run(["serve", "--http", ":0", "--detach", "--config", configFile], { CODEMUX_TOKEN: TOKEN });
    expect(start.code).toBe(0);
    const [before] = JSON.parse((await run(["status", "--json", "--config", configFile])).stdout) as Array<{ pid: number; url: string; auth: unknown }>;
    expect(before?.auth).toEqual({ flags: 0, tokenFile: null, env: "CODEMUX_TOKEN" });
    expect((await fetch(`${before?.url}/v1/tools`)).status).toBe(401);

    const refused = await run(["restart", "--config", configFile]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("it was started with its token in $CODEMUX_TOKEN, which this shell does not set; set it and run codemux restart again");
    const [still] = JSON.parse((await run(["status", "--json", "--config", configFile])).stdout) as Array<{ pid: number; url: string }>;
    expect(still?.pid).toBe(before?.pid);
    expect((await fetch(`${still?.url}/v1/tools`)).status).toBe(401);

    expect((await run(["restart", "--config", configFile], { CODEMUX_TOKEN: TOKEN })).code).toBe(0);
    const [after] = JSON.parse((await run(["status", "--json", "--config", configFile])).stdout) as Array<{ pid: number; url: string }>;
    expect(after?.pid).not.toBe(before?.pid);
    expect((await fetch(`${after?.url}/v1/tools`)).status).toBe(401);
    expect((await fetch(`${after?.url}/v1/tools`, { headers: { authorization: `Bearer ${SECRET}` } })).status).toBe(200);
    expect((await run(["stop", "--config", configFile])).code).toBe(0);
  });

  it("stop never signals a process that took a stale pidfile's pid; status calls that not running", async () => {
    const unrelated = spawn("sleep", ["60"], { stdio: "ignore" });
    started.push(unrelated);
    await once(unrelated, "spawn");
    const pidfile = pidfilePath(configFile, join(home, ".codemux"));
    await mkdir(dirname(pidfile), { recursive: true });
    for (const identity of ["1 /usr/bin/node /old/codemux serve --http :0", null]) {
      // A daemon that died, whose pid a `sleep` now has: recorded with its own start time, or (an older run file) with none.
      await writeFile(
        pidfile,
        JSON.stringify({
          pid: unrelated.pid,
          url: "http://127.0.0.1:9",
          configPath: configFile,
          logFile: null,
          startedAt: "",
          version: "0.1.0",
          argv: [],
          cwd: dir,
          auth: { flags: 0, tokenFile: null, env: null },
          process: identity,
        }),
      );
      const stop = await run(["stop", "--config", configFile]);
      expect(stop.code).toBe(3);
      expect(stop.stderr).toContain("codemux is not running in the background for this config");
      expect(existsSync(pidfile)).toBe(false);
      expect(unrelated.exitCode).toBe(null);
      expect(unrelated.signalCode).toBe(null);
    }
    await writeFile(pidfile, JSON.stringify({ pid: unrelated.pid, url: "http://127.0.0.1:9", argv: [], cwd: dir, process: "1 elsewhere" }));
    expect((await run(["status", "--config", configFile])).code).toBe(3);
    expect((await run(["restart", "--config", configFile])).code).toBe(3);
    expect(unrelated.signalCode).toBe(null);
    unrelated.kill();
  });
});
