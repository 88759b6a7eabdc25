import { misbehavingServerPath } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { ChildProcess } from "node:child_process";
import { mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliRun, runCli } from "./run-cli";
import { serveCli } from "./serve-cli";

const ALICE = "alice-cli-token-0123456789";
const BOB = "bob-cli-token-9876543210";
const SECRET = "sk-proj-0123456789abcdefghijklmnop";

let dir: string;
let home: string;
const started: ChildProcess[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "codemux-limits-cli-"));
  home = await mkdtemp(join(tmpdir(), "codemux-limits-home-"));
});
afterAll(async () => {
  for (const child of started) if (child.exitCode === null) child.kill("SIGKILL");
  await Promise.all([dir, home].map((d) => rm(d, { recursive: true, force: true })));
});

const env = () => ({ PATH: process.env.PATH ?? "", HOME: home, CODEMUX_HOME: join(home, ".codemux") });

async function configWith(http: unknown, name = "codemux.json"): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, JSON.stringify({ mcpServers: { m: { command: process.execPath, args: [misbehavingServerPath] } }, ...(http ? { http } : {}) }));
  return file;
}

/** Starts `codemux serve --http :0` with two tokens; resolves with its URL once it says it serves. */
function serveHttp(args: string[]): Promise<{ child: ChildProcess; url: string }> {
  return serveCli(["serve", "--http", ":0", "--token", `alice:${ALICE}`, "--token", `bob:${BOB}`, ...args], { cwd: dir, env: env(), started });
}

function run(args: string[]): Promise<CliRun> {
  return runCli(args, { cwd: dir, env: env() });
}

async function stop(child: ChildProcess): Promise<number | null> {
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  child.kill("SIGTERM");
  return exited;
}

async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: "limits", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

const textOf = (r: unknown) => ((r as CallToolResult).content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("\n");

describe("codemux serve --http: limits, secrets at rest, broken pipes", () => {
  it("keeps serving when its log reader goes away (serve --http 2>&1 | head -1)", async () => {
    const { child, url } = await serveHttp(["--config", await configWith(undefined)]);
    child.stderr?.destroy();
    child.stdout?.destroy();
    // Each request writes a log line into the closed pipe.
    for (let i = 0; i < 5; i++) expect((await fetch(`${url}/v1/tools`, { headers: { authorization: `Bearer ${ALICE}` } })).status).toBe(200);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect(child.exitCode).toBeNull();
    expect(await stop(child)).toBe(0);
  });

  it("applies the config's http.limits per principal, and journals a background call's arguments redacted", async () => {
    const file = await configWith({ limits: { perPrincipal: { sessions: 1 }, principals: { bob: { sessions: 2 } } } });
    const { child, url } = await serveHttp(["--config", file]);
    const alice = await connect(url, ALICE);
    await expect(connect(url, ALICE)).rejects.toThrow(/sessions per principal: 1/);
    const bobs = [await connect(url, BOB), await connect(url, BOB)];

    const started = textOf(await alice.callTool({ name: "call_tool", arguments: { name: "m__slow", args: { ms: 10, query: SECRET }, background: true } }));
    const id = /job_[0-9a-f]{12}/.exec(started)?.[0] as string;
    await alice.callTool({ name: "jobs", arguments: { action: "output", ids: [id] } });
    const segments = join(home, ".codemux", "jobs", "segments");
    const journal = (await Promise.all((await readdir(segments)).map((f) => readFile(join(segments, f), "utf8")))).join("\n");
    expect(journal).toContain(id);
    expect(journal).toContain('"query":"[REDACTED:api-key]"');
    expect(journal).not.toContain(SECRET);

    for (const client of [alice, ...bobs]) await client.close();
    expect(await stop(child)).toBe(0);
  });

  it("refuses a reserved token name, a malformed trusted proxy and a mistyped http setting with exit 2 and a sentence", async () => {
    const file = await configWith(undefined);
    const local = await run(["serve", "--http", ":0", "--config", file, "--token", `local:${ALICE}`]);
    expect(local.code).toBe(2);
    expect(local.stderr).toContain('Token name "local" is reserved');
    const proxy = await run(["serve", "--http", ":0", "--config", file, "--trusted-proxy", "proxy.internal"]);
    expect(proxy.code).toBe(2);
    expect(proxy.stderr).toContain('--trusted-proxy: Trusted proxy "proxy.internal" is not an IP address or a CIDR range');
    const typo = await run(["serve", "--http", ":0", "--config", await configWith({ limits: { perPrincipal: { session: 2 } } }, "typo.json")]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('http.limits.perPrincipal.session: unknown setting (did you mean "sessions"?)');
    expect(typo.stderr).not.toContain("    at ");
  });
});
