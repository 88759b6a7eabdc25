import { misbehavingServerPath } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { ChildProcess } from "node:child_process";
import { mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./run-cli";
import { serveCli } from "./serve-cli";

const ALICE = "alice-forget-token-0123456789";
const BOB = "bob-forget-token-9876543210";

let dir: string;
let home: string;
const started: ChildProcess[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "codemux-forget-cli-"));
  home = await mkdtemp(join(tmpdir(), "codemux-forget-home-"));
});
afterAll(async () => {
  for (const child of started) if (child.exitCode === null) child.kill("SIGKILL");
  await Promise.all([dir, home].map((d) => rm(d, { recursive: true, force: true })));
});

const env = () => ({ PATH: process.env.PATH ?? "", HOME: home, CODEMUX_HOME: join(home, ".codemux") });
const textOf = (r: unknown) => ((r as CallToolResult).content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("\n");

async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: "forget", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

/** Every file's text under a folder, by name (recursively). */
async function filesUnder(folder: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(folder, { recursive: true, withFileTypes: true }).catch(() => [])) {
    if (entry.isFile()) out[join(entry.parentPath, entry.name)] = await readFile(join(entry.parentPath, entry.name), "utf8");
  }
  return out;
}

/** What each user leaves behind: a skill, a background job, audit lines. */
async function use(client: Client, who: string): Promise<void> {
  const code = `import { echo } from "mcp/servers/m/echo";\nexport async function ${who}Echo(): Promise<unknown> { return echo({ text: "${who}-secret-words" }); }`;
  const saved = textOf(await client.callTool({ name: "save_skill", arguments: { name: `${who}Echo`, code, description: `${who}'s echo` } }));
  expect(saved).toContain(`Saved mcp/skills/${who}Echo`);
  const job = textOf(await client.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: `${who}-job-words` }, background: true } }));
  const id = /job_[0-9a-f]{12}/.exec(job)?.[0] as string;
  await client.callTool({ name: "jobs", arguments: { action: "output", ids: [id] } });
  await client.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: `${who}-call-words` } } });
}

describe("codemux forget", () => {
  it("deletes one principal's skills, jobs with their transcripts, and audit lines, and keeps the other's", async () => {
    const config = join(dir, "codemux.json");
    await writeFile(config, JSON.stringify({ mcpServers: { m: { command: process.execPath, args: [misbehavingServerPath] } }, plugins: { audit: {} } }));
    const { child, url } = await serveCli(["serve", "--http", ":0", "--config", config, "--token", `alice:${ALICE}`, "--token", `bob:${BOB}`], {
      cwd: dir,
      env: env(),
      started,
    });
    const alice = await connect(url, ALICE);
    const bob = await connect(url, BOB);
    await use(alice, "alice");
    await use(bob, "bob");
    await alice.close();
    await bob.close();
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    await exited;

    const data = join(home, ".codemux");
    const auditLines = async () =>
      Object.entries(await filesUnder(join(data, "audit")))
        .flatMap(([, text]) => text.split("\n").filter(Boolean))
        .map((line) => JSON.parse(line) as { principal: string; tool: string });
    // The principal as the gateway names the token (whatever its kind prefix), read back from what it wrote.
    const alicePrincipal = (await auditLines()).find((line) => line.principal.includes("alice"))?.principal as string;
    expect(alicePrincipal).toBeTruthy();
    const before = JSON.stringify(await filesUnder(data));
    for (const words of ["alice-secret-words", "alice-job-words", "bob-secret-words", "bob-job-words"]) expect(before).toContain(words);

    const forgotten = await runCli(["forget", alicePrincipal, "--config", config], { cwd: dir, env: env() });
    expect(forgotten.stderr).toBe("");
    expect(forgotten.code).toBe(0);
    expect(forgotten.stdout).toMatch(
      new RegExp(`Forgot ${alicePrincipal}: 0 kept results, 1 skill, 1 job \\(with its transcript\\), [1-9]\\d* audit lines\\.`),
    );

    const after = JSON.stringify(await filesUnder(data));
    for (const words of ["alice-secret-words", "alice-job-words", "aliceEcho"]) expect(after).not.toContain(words);
    for (const words of ["bob-secret-words", "bob-job-words", "bobEcho"]) expect(after).toContain(words);
    const lines = await auditLines();
    expect(lines.some((line) => line.principal === alicePrincipal)).toBe(false);
    expect(lines.some((line) => line.principal.includes("bob"))).toBe(true);
    const jobs = await runCli(["jobs", "list"], { cwd: dir, env: env() });
    expect(jobs.stdout.trim().split("\n")).toEqual([expect.stringMatching(/completed .* (token:)?bob +call_tool: m__echo$/)]);

    const again = await runCli(["forget", alicePrincipal, "--config", config], { cwd: dir, env: env() });
    expect(again.stdout).toContain(`Forgot ${alicePrincipal}: 0 kept results, 0 skills, 0 jobs (with their transcripts), 0 audit lines.`);
  });

  it("refuses an empty or control-character principal with exit 2", async () => {
    const bad = await runCli(["forget", "a\u0001b"], { cwd: dir, env: env() });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("is not a principal");
  });
});
