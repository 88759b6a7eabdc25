import { skillServerPath, until } from "@codemux/test-servers";
import { Client } from "@modelcontextprotocol/client";
import { SkillsClient, type Skill } from "@modelcontextprotocol/client/ext/skills";
import { InMemoryTransport } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Codemux, createSessionServer } from "../src/index";
import { config, node } from "./helpers";

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
  await until(() => core.services.serverSkills.list(core.session()).length === 1);
}, 30_000);
afterAll(async () => {
  await core.close();
});

async function open(): Promise<SkillsClient> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createSessionServer(core, { mode: "code" }).connect(serverSide);
  const client = new Client({ name: "host", version: "1.0.0" });
  await client.connect(clientSide);
  return new SkillsClient(client);
}

describe("the skills extension, served", () => {
  it("passes a skill file larger than the spill threshold whole, so its digest holds", async () => {
    const skills = await open();
    const { skills: entries } = await skills.list();
    const large = entries.find((s) => s.uri === "skill://docs/large/SKILL.md") as Skill;
    const file = await skills.read(large);
    expect(file.verified).toBe(true);
    expect(file.body?.length).toBeGreaterThan(30_000);
  });

  it("pages skills/list 100 at a time, every skill once, and refuses a cursor it did not give", async () => {
    const skills = await open();
    const first = await skills.list({ cursor: "0" }).catch((error: Error) => error);
    expect(first).toBeInstanceOf(Error);
    const page = await skills.list({ cursor: "100" });
    expect(page.skills).toHaveLength(23);
    const all = await skills.list();
    expect(all.skills).toHaveLength(123);
    expect(new Set(all.skills.map((s) => s.uri)).size).toBe(123);
  });
});
