import { haveProgram, misbehavingEntry, startRedisServer, until, type RedisServer } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { ChildProcess } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./run-cli";
import { endParts } from "./scale-out-parts";
import { serveCli } from "./serve-cli";

const haveRedis = haveProgram("redis-server", "redis-server");

const ALICE = "alice-skills-token-0123456789";
const BOB = "bob-skills-token-0123456789";

const SHOUT = `import { echo } from "mcp/servers/m/echo";

/** Says the text back in capitals. */
export async function shout(input: { text: string }): Promise<string> {
  return String(await echo({ text: input.text })).toUpperCase() + "!";
}
`;
const BOBS_SHOUT = `/** Bob's own. */
export async function shout(input: { text: string }): Promise<string> {
  return "bob: " + input.text;
}
`;

type Instance = { url: string; child: ChildProcess; stderr: () => string };
type ToolAnswer = { content: Array<{ type: string; text?: string }>; isError?: boolean };

describe.skipIf(!haveRedis)("saved skills and memories shared by two codemux instances on one Redis", () => {
  let dir: string;
  let redis: RedisServer;
  const started: ChildProcess[] = [];
  let a: Instance;
  let b: Instance;

  async function startInstance(id: string): Promise<Instance> {
    const home = await mkdtemp(join(dir, `home-${id}-`));
    const env = { ...process.env, CODEMUX_HOME: home, CODEMUX_STORE: redis.url };
    const args = ["serve", "--http", "127.0.0.1:0", "--config", join(dir, "codemux.json"), "--instance-id", id];
    return await serveCli([...args, "--token", `alice:${ALICE}`, "--token", `bob:${BOB}`], { cwd: dir, env, started });
  }

  const connected = new Map<string, Client>();
  /** One MCP session per instance and principal, made at first use. */
  async function client(instance: Instance, token: string): Promise<Client> {
    const key = `${instance.url} ${token}`;
    let made = connected.get(key);
    if (!made) {
      made = new Client({ name: "scale-out-skills-test", version: "1.0.0" });
      await made.connect(new StreamableHTTPClientTransport(new URL(`${instance.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
      connected.set(key, made);
    }
    return made;
  }
  const text = async (c: Client, name: string, args: Record<string, unknown>) => {
    const answer = (await c.callTool({ name, arguments: args })) as ToolAnswer;
    return { text: answer.content.map((block) => block.text ?? "").join("\n"), isError: answer.isError === true };
  };
  const run = async (c: Client, code: string) =>
    JSON.parse((await text(c, "execute_code", { code })).text) as { result?: unknown; error?: { message?: string } };
  const runShout = (c: Client) => run(c, 'import { shout } from "mcp/skills/shout"; export default await shout({ text: "hi" });');
  const found = async (c: Client) => (await text(c, "search_tools", { query: "shout", limit: 5 })).text;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "codemux-scale-out-skills-"));
    redis = await startRedisServer();
    await writeFile(join(dir, "codemux.json"), JSON.stringify({ mcpServers: { m: misbehavingEntry("m") }, plugins: { memory: {} } }));
    [a, b] = [await startInstance("a"), await startInstance("b")];
  }, 60_000);

  afterAll(() => endParts({ clients: [...connected.values()], started, redis, dir }));

  it("runs and finds through one instance a skill saved through the other, for its principal only", async () => {
    const [aliceOnA, aliceOnB, bobOnB] = [await client(a, ALICE), await client(b, ALICE), await client(b, BOB)];
    const saved = await text(aliceOnA, "save_skill", { name: "shout", code: SHOUT, description: "Say a text back in capitals with an exclamation mark." });
    expect(saved.text).toContain("Saved mcp/skills/shout");
    // b hears of it (pub/sub) and serves it from its copy in memory.
    await until(async () => (await found(aliceOnB)).includes("skill:shout"));
    expect((await found(aliceOnB)).split("\n")[0]).toBe("skill:shout  mcp/skills/shout");
    expect((await runShout(aliceOnB)).result).toBe("HI!");
    expect((await text(aliceOnB, "list_modules", { path: "mcp/skills" })).text).toContain("mcp/skills/shout");

    // Bob, on the same instance, neither finds, imports, deletes nor overwrites alice's.
    expect(await found(bobOnB)).not.toContain("skill:shout");
    expect((await runShout(bobOnB)).error?.message).toMatch(/mcp\/skills\/shout/);
    const bobDeletes = await text(bobOnB, "save_skill", { name: "shout", delete: true });
    expect(bobDeletes).toEqual({ isError: true, text: expect.stringMatching(/^No skill named "shout"/) });
    expect((await text(bobOnB, "save_skill", { name: "shout", code: BOBS_SHOUT, description: "Bob's own shout." })).isError).toBe(false);
    expect((await runShout(bobOnB)).result).toBe("bob: hi");
    await until(async () => (await found(await client(a, BOB))).includes("skill:shout"));
    expect((await runShout(aliceOnA)).result).toBe("HI!");
    expect((await runShout(aliceOnB)).result).toBe("HI!");

    // Deleted through b: gone on a too, and bob's stays.
    expect((await text(aliceOnB, "save_skill", { name: "shout", delete: true })).isError).toBe(false);
    await until(async () => !(await found(aliceOnA)).includes("skill:shout"));
    expect((await runShout(aliceOnA)).error?.message).toMatch(/mcp\/skills\/shout/);
    expect((await runShout(await client(a, BOB))).result).toBe("bob: hi");
  });

  it("a new instance imports the saved skills before it serves, and forgetting a principal through one instance deletes its skills on every one", async () => {
    const aliceOnA = await client(a, ALICE);
    expect((await text(aliceOnA, "save_skill", { name: "shout", code: SHOUT, description: "Say a text back in capitals." })).isError).toBe(false);
    const c = await startInstance("c");
    expect((await runShout(await client(c, ALICE))).result).toBe("HI!");
    const forgot = await fetch(`${b.url}/v1/principals/token:alice`, { method: "DELETE", headers: { authorization: `Bearer ${ALICE}` } });
    expect(((await forgot.json()) as { forgotten: { skills: number } }).forgotten.skills).toBe(1);
    for (const instance of [a, c]) await until(async () => (await runShout(await client(instance, ALICE))).error !== undefined);
    expect((await runShout(await client(c, BOB))).result).toBe("bob: hi");
  });

  it("recalls through one instance what a tool answered through the other, for the same principal only, until forgotten through either", async () => {
    const answer = await fetch(`${a.url}/v1/tools/m__echo/call`, {
      method: "POST",
      headers: { authorization: `Bearer ${ALICE}`, "content-type": "application/json" },
      body: JSON.stringify({ text: "the blue heron nests at dawn" }),
    });
    expect(answer.status).toBe(200);
    const recalled = await text(await client(b, ALICE), "memory", { action: "recall", query: "heron" });
    expect(recalled.text).toContain("the blue heron nests at dawn");
    expect((await text(await client(b, BOB), "memory", { action: "recall", query: "heron" })).text).toBe('{"memories":[]}');
    // Forgotten through a: gone on b.
    const forgot = await fetch(`${a.url}/v1/principals/token:alice`, { method: "DELETE", headers: { authorization: `Bearer ${ALICE}` } });
    expect(((await forgot.json()) as { forgotten: { memory: number } }).forgotten.memory).toBe(1);
    expect((await text(await client(b, ALICE), "memory", { action: "recall", query: "heron" })).text).toBe('{"memories":[]}');
  });

  it("codemux skills save and list on the command line go through the deployment's Redis when CODEMUX_STORE is set", async () => {
    await writeFile(
      join(dir, "wave.ts"),
      '/** Waves at someone. */\nexport async function wave(input: { name: string }): Promise<string> {\n  return "o/ " + input.name;\n}\n',
    );
    const config = ["--config", join(dir, "codemux.json")];
    const here = { ...process.env, CODEMUX_HOME: await mkdtemp(join(dir, "home-cli-1-")), CODEMUX_STORE: redis.url };
    const saved = await runCli(["skills", "save", "wave", join(dir, "wave.ts"), ...config], { cwd: dir, env: here });
    expect(saved.stderr).toBe("");
    expect(saved.stdout).toContain("Saved mcp/skills/wave");
    // Another machine: its own empty home, the same Redis.
    const elsewhere = { ...process.env, CODEMUX_HOME: await mkdtemp(join(dir, "home-cli-2-")), CODEMUX_STORE: redis.url };
    expect((await runCli(["skills", "list", ...config], { cwd: dir, env: elsewhere })).stdout).toContain("mcp/skills/wave");
    // Without the store setting the same machine has none of its own.
    const { CODEMUX_STORE: _store, ...alone } = elsewhere;
    expect((await runCli(["skills", "list", ...config], { cwd: dir, env: alone })).stdout).toContain("No skills yet");
    expect((await runCli(["skills", "delete", "wave", ...config], { cwd: dir, env: elsewhere })).code).toBe(0);
    expect((await runCli(["skills", "list", ...config], { cwd: dir, env: here })).stdout).toContain("No skills yet");
  }, 60_000);

  it("while Redis is down, still runs a saved skill from memory and fails a save with a sentence naming Redis", async () => {
    const aliceOnA = await client(a, ALICE);
    expect((await text(aliceOnA, "save_skill", { name: "shout", code: SHOUT, description: "Say a text back in capitals." })).isError).toBe(false);
    await until(async () => (await runShout(await client(b, ALICE))).result === "HI!");
    await redis.kill();
    try {
      const aliceOnB = await client(b, ALICE);
      expect((await runShout(aliceOnB)).result).toBe("HI!");
      const refused = await text(aliceOnB, "save_skill", { name: "whisper", code: SHOUT.replaceAll("shout", "whisper"), description: "Quietly." });
      expect(refused.isError).toBe(true);
      expect(refused.text).toMatch(/^codemux could not save skill "whisper" in Redis: Redis at redis:\/\/127\.0\.0\.1:\d+\/? did not answer/);
    } finally {
      await redis.restart();
    }
  });
});
