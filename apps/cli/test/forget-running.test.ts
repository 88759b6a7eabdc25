import { misbehavingEntry } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./run-cli";
import { serveCli } from "./serve-cli";

/**
 * `codemux forget` on the host of running gateways: every row of SECURITY.md's forget table (what a
 * principal's calls write) is checked gone through the gateways themselves, not only on disk.
 */
const TOKENS = { alice: "alice-forget-running-0123456789", bob: "bob-forget-running-0123456789", admin: "admin-forget-running-0123456789" };
type Who = "alice" | "bob";

let dir: string;
let home: string;
let out: string;
let code: string;
let dispatch: string;
const started: ChildProcess[] = [];
const clients: Client[] = [];

const env = () => ({ PATH: process.env.PATH ?? "", HOME: dir, CODEMUX_HOME: home });
const textOf = (r: unknown) => ((r as CallToolResult).content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("\n");
const headers = (who: Who | "admin") => ({ authorization: `Bearer ${TOKENS[who]}`, "content-type": "application/json" });

async function connect(url: string, who: Who): Promise<Client> {
  const client = new Client({ name: `forget-${who}`, version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKENS[who]}` } } }));
  clients.push(client);
  return client;
}

/** Every file's text under a folder (recursively), as one string. */
async function textUnder(folder: string): Promise<string> {
  const texts: string[] = [];
  for (const entry of await readdir(folder, { recursive: true, withFileTypes: true }).catch(() => [])) {
    if (entry.isFile()) texts.push(join(entry.parentPath, entry.name), await readFile(join(entry.parentPath, entry.name), "utf8").catch(() => ""));
  }
  return texts.join("\n");
}

/** What the admin page's Activity of one gateway shows an admin of `who`'s calls: its rows, and each call's page with arguments and result. */
async function activityOf(url: string, who: Who): Promise<string> {
  const login = await fetch(`${url}/ui/login`, { method: "POST", body: new URLSearchParams({ token: TOKENS.admin }), redirect: "manual" });
  const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] as string;
  const rows = (await (await fetch(`${url}/ui/activity-rows`, { headers: { cookie } })).text())
    .split("<tr ")
    .filter((row) => row.includes(`<td>token:${who}</td>`));
  const ids = rows.map((row) => /data-call="(\d+)"/.exec(row)?.[1]);
  return [...rows, ...(await Promise.all(ids.map(async (id) => (await fetch(`${url}/ui/call?id=${id}`, { headers: { cookie } })).text())))].join("\n");
}

/** What one principal's calls leave, one of each row of the forget table; returns how to find each again. */
async function leave(who: Who) {
  const mcp = await connect(code, who);
  // A kept result (over REST; spilled past --spill-bytes).
  const spilled = (await (
    await fetch(`${code}/v1/tools/m__huge/call`, { method: "POST", headers: headers(who), body: JSON.stringify({ bytes: 20_000 }) })
  ).json()) as { spilled?: { handle: string } };
  const handle = spilled.spilled?.handle as string;
  expect(handle).toMatch(/^res_/);
  // A saved skill.
  const skill = `import { echo } from "mcp/servers/m/echo";\nexport async function ${who}Echo(): Promise<unknown> { return echo({ text: "${who}-skill-words" }); }`;
  expect(textOf(await mcp.callTool({ name: "save_skill", arguments: { name: `${who}Echo`, code: skill, description: `${who}'s echo` } }))).toContain(
    `Saved mcp/skills/${who}Echo`,
  );
  // A background job with its transcript and result.
  const started = textOf(await mcp.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: `${who}-job-words` }, background: true } }));
  const job = /job_[0-9a-f]{12}/.exec(started)?.[0] as string;
  await mcp.callTool({ name: "jobs", arguments: { action: "output", ids: [job], wait_up_to: 20 } });
  // A call: its audit line, its memory, its Activity entry.
  expect(textOf(await mcp.callTool({ name: "call_tool", arguments: { name: "m__echo", args: { text: `${who}-call-words` } } }))).toBe(`${who}-call-words`);
  // A cached answer: the second call is answered from the cache plugin's memory.
  const counted = textOf(await mcp.callTool({ name: "call_tool", arguments: { name: "m__counter", args: {} } }));
  expect(textOf(await mcp.callTool({ name: "call_tool", arguments: { name: "m__counter", args: {} } }))).toBe(counted);
  // Its own server instance (isolation): it has seen this principal's calls.
  await mcp.callTool({ name: "call_tool", arguments: { name: "own__counter", args: {} } });
  // Its own login to a server with per-principal credentials, where such a login is kept.
  const logins = join(home, "auth", "principals", createHash("sha256").update(`token:${who}`).digest("hex").slice(0, 32));
  await mkdir(logins, { recursive: true });
  await writeFile(join(logins, "gh.json"), JSON.stringify({ server: "gh", tokens: { access_token: `${who}-login-words` } }));
  // A result file, written by dispatch's resultToFile on the other gateway.
  const dispatcher = await connect(dispatch, who);
  const written = JSON.parse(
    textOf(
      await dispatcher.callTool({
        name: "codemux",
        arguments: { action: "call", tool: "m__echo", arguments: { text: `${who}-file-words` }, resultToFile: true },
      }),
    ),
  ) as { resultFile: string };
  expect(await readFile(written.resultFile, "utf8")).toContain(`${who}-file-words`);
  return { mcp, handle, job, counted, resultFile: written.resultFile };
}

/** How each row looks for `who` through the running gateways: true where something of it is still there. */
async function rows(who: Who, left: Awaited<ReturnType<typeof leave>>) {
  // What is on disk and on the admin page first: the probing calls below write audit lines and Activity entries of their own.
  const files = `${await textUnder(home)}\n${await textUnder(out)}`;
  const auditLines = (await textUnder(join(home, "audit"))).includes(`"token:${who}"`);
  const activity = (await activityOf(code, who)).includes(`${who}-call-words`);
  const dispatchActivity = (await activityOf(dispatch, who)).includes(`${who}-file-words`);
  const skill = textOf(
    await left.mcp.callTool({
      name: "execute_code",
      arguments: { code: `import { ${who}Echo } from "mcp/skills/${who}Echo";\nexport default await ${who}Echo();` },
    }),
  );
  const job = textOf(await left.mcp.callTool({ name: "jobs", arguments: { action: "output", ids: [left.job] } }));
  const memory = textOf(await left.mcp.callTool({ name: "memory", arguments: { action: "recall", query: `${who}-call-words` } }));
  const counter = textOf(await left.mcp.callTool({ name: "call_tool", arguments: { name: "m__counter", args: {} } }));
  const own = JSON.parse(textOf(await left.mcp.callTool({ name: "call_tool", arguments: { name: "own__counter", args: {} } }))) as { calls: number };
  return {
    keptResult: (await fetch(`${code}/v1/results/${left.handle}`, { headers: headers(who) })).status === 200,
    skill: skill.includes(`${who}-skill-words`),
    skillFile: files.includes(`${who}-skill-words`),
    job: job.includes(`${who}-job-words`),
    jobFiles: files.includes(`${who}-job-words`),
    auditLines,
    memory: memory.includes(`${who}-call-words`),
    memoryFile: files.includes(`${who}-call-words`),
    cachedAnswer: counter === left.counted,
    resultFile: files.includes(`${who}-file-words`),
    login: files.includes(`${who}-login-words`),
    // A fresh instance of its own server has seen only this probe.
    ownServer: own.calls > 1,
    activity,
    dispatchActivity,
  };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "codemux-forget-running-"));
  home = join(dir, "home");
  out = join(dir, "out");
  await mkdir(out);
  const config = join(dir, "codemux.json");
  await writeFile(
    config,
    JSON.stringify({
      mcpServers: { m: misbehavingEntry("m"), own: misbehavingEntry("own", { isolation: "principal" }) },
      plugins: { audit: { includeArguments: true }, memory: {}, cache: { tools: ["m__counter"], ttlMs: 600_000 } },
      dispatch: { resultFileDir: "out" },
    }),
  );
  const tokens = Object.entries(TOKENS).flatMap(([name, token]) => ["--token", `${name}:${token}`]);
  const serve = ["serve", "--http", "127.0.0.1:0", "--config", config, "--spill-bytes", "2000", ...tokens];
  code = (await serveCli(serve, { cwd: dir, env: env(), started })).url;
  dispatch = (await serveCli([...serve, "--mode", "dispatch"], { cwd: dir, env: env(), started })).url;
}, 60_000);

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
  for (const child of started) if (child.exitCode === null) child.kill("SIGKILL");
  await rm(dir, { recursive: true, force: true });
});

describe("codemux forget with gateways running on this machine", () => {
  it("asks each running gateway, and every row of the forget table is gone for the principal through them, while the other's stays", async () => {
    const alice = await leave("alice");
    const bob = await leave("bob");
    const everything = {
      keptResult: true,
      skill: true,
      skillFile: true,
      job: true,
      jobFiles: true,
      auditLines: true,
      memory: true,
      memoryFile: true,
      cachedAnswer: true,
      resultFile: true,
      login: true,
      ownServer: true,
      activity: true,
      dispatchActivity: true,
    };
    expect(await rows("alice", alice)).toEqual(everything);

    // A bare name is the token's. Two kept results: the large one, and the one resultToFile also keeps as a handle.
    const run = await runCli(["forget", "alice", "--config", join(dir, "codemux.json")], { cwd: dir, env: env() });
    expect(run.code, run.stderr).toBe(0);
    expect(await rows("alice", alice)).toEqual(Object.fromEntries(Object.keys(everything).map((row) => [row, false])));
    expect(await rows("bob", bob)).toEqual(everything);
    expect(run.stderr).toBe("");
    expect(run.stdout, run.stdout).toMatch(
      /^Forgot token:alice: 2 kept results, 1 skill, 1 result file, 1 login of its own to a server, 1 job \(with its transcript\), [1-9]\d* audit lines, [1-9]\d* memories, 1 cached answer in memory, [1-9]\d* calls on the admin page's Activity\.\n/,
    );
    const asked = /\nRunning instances asked: (.*)\.\n/.exec(run.stdout)?.[1] ?? "";
    expect(asked.split(", ")).toHaveLength(2);
    for (const url of [code, dispatch]) expect(asked).toContain(`the codemux at ${url} (pid `);
  }, 120_000);

  it("refuses, deleting nothing, while a codemux runs here that it cannot ask, and names the route that forgets by hand", async () => {
    const run = join(home, "run");
    // This test's own process stands for a gateway whose admin socket is gone.
    const file = join(run, "instance-0123456789ab.json");
    await mkdir(run, { recursive: true });
    await writeFile(file, JSON.stringify({ pid: process.pid, url: "http://127.0.0.1:9", socket: join(run, "gone.sock"), startedAt: "", process: null }));
    try {
      const refused = await runCli(["forget", "token:bob", "--config", join(dir, "codemux.json")], { cwd: dir, env: env() });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(
        `codemux runs at http://127.0.0.1:9 (pid ${process.pid}) and holds what it keeps in memory, but does not answer on its admin socket, so nothing was deleted: ask it (curl -X DELETE http://127.0.0.1:9/v1/principals/token%3Abob`,
      );
      expect(await textUnder(home)).toContain("bob-job-words");
    } finally {
      await rm(file, { force: true });
    }
  });
});
