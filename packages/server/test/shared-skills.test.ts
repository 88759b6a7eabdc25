import { RedisConnection, RedisSkillShelf } from "@codemux/redis";
import { haveProgram, startRedisServer, until, type RedisServer } from "@codemux/test-servers";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { config, connect, misbehaving, textOf, type Harness, servicesOf } from "./helpers";

const haveRedis = haveProgram("redis-server", "redis-server");

const skill = (name: string, said: string) => `/** Says ${said}. */
export async function ${name}(input: { text: string }): Promise<string> {
  return "${said}: " + input.text;
}
`;

/** Two cores, as two instances, each with its own connection to one Redis; their data folders are their own. */
describe.skipIf(!haveRedis)("saved skills in a shared store (two cores on one real redis-server)", () => {
  let redis: RedisServer;
  let dir: string;
  const closers: Array<{ close(): Promise<void> }> = [];
  let a: Harness;
  let b: Harness;
  let raw: RedisConnection;

  const instance = async (name: string) => {
    const connection = await RedisConnection.open({ url: redis.url, prefix: "skills-test:" });
    expect(await connection.ready(5000)).toBe(true);
    const shelf = new RedisSkillShelf(connection);
    const harness = await connect({ config: config({ bad: misbehaving() }), dataDir: join(dir, name), sharedSkills: shelf });
    await servicesOf(harness.core).skills.refresh();
    closers.unshift(harness, shelf, connection);
    return harness;
  };
  const run = async (h: Harness, name: string) =>
    JSON.parse(await h.text("execute_code", { code: `import { ${name} } from "mcp/skills/${name}"; export default await ${name}({ text: "hi" });` })) as {
      result?: unknown;
    };

  beforeAll(async () => {
    redis = await startRedisServer();
    dir = await mkdtemp(join(tmpdir(), "codemux-shared-skills-"));
    raw = await RedisConnection.open({ url: redis.url, prefix: "skills-test:" });
    closers.push(raw);
    [a, b] = [await instance("a"), await instance("b")];
  });
  afterAll(async () => {
    for (const closer of closers) await closer.close();
    await redis?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("saves into the shared store, not the data folder, and the other core imports it once told", async () => {
    expect(textOf(await a.call("save_skill", { name: "greet", code: skill("greet", "hello"), description: "Greets." }))).toContain("Saved mcp/skills/greet");
    await until(() => servicesOf(b.core).skills.get("local", "greet") !== undefined);
    expect((await run(b, "greet")).result).toBe("hello: hi");
    await expect(readdir(join(dir, "a", "skills"))).rejects.toThrow(/ENOENT/);
  });

  it("refuses a save over a skill another instance saved unheard, says so, and then has the other's", async () => {
    expect(textOf(await a.call("save_skill", { name: "race", code: skill("race", "first"), description: "Races." }))).toContain("Saved");
    await until(() => servicesOf(b.core).skills.get("local", "race") !== undefined);
    // A third instance saves "race" without its change message reaching anyone (a message still on its way).
    const key = (await raw.client.keys("skills-test:skills:of:*"))[0] as string;
    const theirs = JSON.parse((await raw.client.hget(key, "race"))?.slice(2) ?? "{}") as Record<string, unknown>;
    await raw.client.hset(key, "race", `1\n${JSON.stringify({ ...theirs, code: skill("race", "third"), savedAt: "2026-11-27T00:00:00.000Z" })}`);
    const refused = await b.call("save_skill", { name: "race", code: skill("race", "second"), description: "Races." });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toBe(
      'Skill "race" was saved (at 2026-11-27T00:00:00.000Z) through another codemux instance while you saved it, so yours was not saved. Read mcp/skills/race to see it, then save again to replace it.',
    );
    expect((await run(b, "race")).result).toBe("third: hi");
    // Now b has seen it, its save replaces it, and a hears of that.
    expect(textOf(await b.call("save_skill", { name: "race", code: skill("race", "second"), description: "Races." }))).toContain("Saved");
    await until(async () => (await run(a, "race")).result === "second: hi");
  });

  it("loads no record filed under a principal that is not its own", async () => {
    const key = (await raw.client.keys("skills-test:skills:of:*"))[0] as string;
    const greet = JSON.parse((await raw.client.hget(key, "greet"))?.slice(2) ?? "{}") as Record<string, unknown>;
    await raw.client.hset(key, "planted", `1\n${JSON.stringify({ ...greet, name: "planted", principal: "mallory" })}`);
    await servicesOf(b.core).skills.refresh();
    expect(servicesOf(b.core).skills.get("local", "planted")).toBeUndefined();
    expect(servicesOf(b.core).skills.get("mallory", "planted")).toBeUndefined();
    expect(servicesOf(b.core).skills.get("local", "greet")).toBeDefined();
  });
});
