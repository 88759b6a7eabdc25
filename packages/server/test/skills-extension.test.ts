import { skillServerPath, until } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/client";
import { SkillsClient, type Skill } from "@modelcontextprotocol/client/ext/skills";
import { InMemoryTransport } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionInfo } from "@codemux/core";
import { Codemux, createSessionServer } from "../src/index";
import { config, node, servicesOf } from "./helpers";

/**
 * The Skills extension served upstream, in process (apps/cli's skills-extension test runs it over stdio and HTTP):
 * a skill file larger than the spill threshold reaches the client whole, and skills/list pages.
 */
let core: Codemux;

beforeAll(async () => {
  core = new Codemux({
    config: config({ docs: node(skillServerPath, "--name", "docs", "--large-chars", "30000", "--flood", "120") }),
    largeResultBytes: 2000,
  });
  core.start();
  await core.ready(20_000);
  await until(() => servicesOf(core).serverSkills.list(core.session()).length === 1);
}, 30_000);
afterAll(async () => {
  await core.close();
});

async function connected(mode = "code", session?: SessionInfo): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createSessionServer(core.sessions, { mode, ...(session ? { session } : {}) }).connect(serverSide);
  const client = new Client({ name: "host", version: "1.0.0" });
  await client.connect(clientSide);
  return client;
}
const open = async () => new SkillsClient(await connected());

describe("the skills extension, served", () => {
  it("passes a skill file larger than the spill threshold whole, so its digest holds", async () => {
    const skills = await open();
    const { skills: entries } = await skills.list();
    const large = entries.find((s) => s.uri === "skill://docs/large/SKILL.md") as Skill;
    const file = await skills.read(large);
    expect(file.verified).toBe(true);
    expect(file.body?.length).toBeGreaterThan(30_000);
  });

  it("names each skill file under its server in resources/list too, the URI skills/list gives", async () => {
    const client = await connected();
    const uris = (await client.listResources()).resources.map((r) => r.uri);
    expect(uris).toContain("skill://docs/pdf-forms/SKILL.md");
    expect(uris.filter((uri) => uri.startsWith("skill://") && !uri.startsWith("skill://docs/"))).toEqual([]);
    await client.close();
  });

  it("answers skills/list after a server's change the client was told of with the new list", async () => {
    const client = await connected();
    const skills = new SkillsClient(client);
    expect((await skills.list()).skills.map((s) => s.uri)).not.toContain("skill://docs/fresh/SKILL.md");
    const told = new Promise<void>((resolve) => client.setNotificationHandler("notifications/resources/list_changed", () => resolve()));
    await client.callTool({ name: "call_tool", arguments: { name: "docs__add_skill", args: { name: "fresh" } } });
    await told;
    expect((await skills.list()).skills.map((s) => s.uri)).toContain("skill://docs/fresh/SKILL.md");
    await client.close();
  });

  it("pages skills/list 100 at a time, every skill once, and refuses a cursor it did not give", async () => {
    const skills = await open();
    const first = await skills.list({ cursor: "0" }).catch((error: Error) => error);
    expect(first).toBeInstanceOf(Error);
    const page = await skills.list({ cursor: "100" });
    const all = await skills.list();
    // 123 skills, and one more when the test above added it.
    expect(all.skills.length).toBeGreaterThanOrEqual(123);
    expect(page.skills).toHaveLength(all.skills.length - 100);
    expect(new Set(all.skills.map((s) => s.uri)).size).toBe(all.skills.length);
  });
});

describe("codemux's saved skills, served in mode code", () => {
  const alice: SessionInfo = { id: "alice-session", principal: "token:alice" };
  const bob: SessionInfo = { id: "bob-session", principal: "token:bob" };
  const code = "export async function addOne(input: { n: number }): Promise<number> {\n  return input.n + 1;\n}\n";

  it("lists a principal's saved skill as an Agent Skill whose SKILL.md says how to run it, its source beside it, both verified", async () => {
    await servicesOf(core).skills.save(alice.principal, { name: "addOne", code, description: "Add one to a number: the first step of counting." });
    const client = await connected("code", alice);
    const skills = new SkillsClient(client);
    const entry = (await skills.list()).skills.find((s) => s.uri === "skill://codemux.saved/add-one/SKILL.md") as Skill;
    expect(entry.frontmatter).toEqual({ name: "add-one", description: "Add one to a number: the first step of counting." });
    const manifest = await skills.read(entry);
    expect(manifest.verified).toBe(true);
    expect(manifest.body).toContain('import { addOne } from "mcp/skills/addOne";');
    expect((await skills.read(entry, "skill.ts")).text).toBe(code);
    expect((await skills.get("skill://codemux.saved/add-one/SKILL.md")).skill).toEqual(entry);
    await client.close();
  });

  it("shows them to their principal only, and to no mode without execute_code", async () => {
    const theirs = new SkillsClient(await connected("code", bob));
    expect((await theirs.list()).skills.map((s) => s.uri)).not.toContain("skill://codemux.saved/add-one/SKILL.md");
    await expect(theirs.get("skill://codemux.saved/add-one/SKILL.md")).rejects.toThrow(/No skill is served/);
    const bobClient = await connected("code", bob);
    await expect(bobClient.readResource({ uri: "skill://codemux.saved/add-one/SKILL.md" })).rejects.toThrow(/No server offers the resource/);
    const passthrough = new SkillsClient(await connected("passthrough", alice));
    expect((await passthrough.list()).skills.map((s) => s.uri)).not.toContain("skill://codemux.saved/add-one/SKILL.md");
  });
});
