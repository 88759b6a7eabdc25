import { skillServerPath, until } from "@codemux/test-servers";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { SKILLS_EXTENSION_ID, SkillsClient, SkillVerificationError, type Skill } from "@modelcontextprotocol/client/ext/skills";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli } from "./run-cli";
import { serveCli, stopAll } from "./serve-cli";

/**
 * The Skills extension (SEP-2640) served upstream: codemux over stdio and HTTP, to SDK v2 clients of both eras
 * checked by the SDK's own SkillsClient (which verifies every file's size and digest), with the skills of two
 * SkillCatalog servers downstream (one speaking 2026-07-28, one 2025-11-25) under `skill://<server>/...`, and a
 * policy that hides one of them from a principal.
 */
const TOKENS = { alice: "alice-skills-extension-0123456789", bob: "bob-skills-extension-0123456789" };
let dir: string;
let config: string;
let env: Record<string, string>;
const started: ChildProcess[] = [];
const clients: Client[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "codemux-skills-extension-"));
  config = join(dir, "codemux.json");
  const server = (...args: string[]) => ({ command: process.execPath, args: [skillServerPath, ...args] });
  await writeFile(
    config,
    JSON.stringify({
      mcpServers: {
        docs: server("--name", "docs", "--prefix", "acme", "--large-chars", "30000"),
        old: { ...server("--name", "old"), protocol: "2025-11-25" },
      },
      policies: { default: "allow", rules: [{ name: "docs-only", principals: ["token:alice"], tools: ["docs"] }] },
    }),
  );
  env = { PATH: process.env.PATH ?? "", HOME: dir, CODEMUX_HOME: join(dir, ".codemux") };
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await stopAll(started);
  await rm(dir, { recursive: true, force: true });
});

type Era = "legacy" | "modern";
const negotiation = (era: Era) => ({ versionNegotiation: { mode: era === "modern" ? ("auto" as const) : ("legacy" as const) } });

async function overStdio(era: Era): Promise<Client> {
  const client = new Client({ name: `skills-${era}`, version: "1.0.0" }, negotiation(era));
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [cli, "--config", config], cwd: dir, env, stderr: "pipe" }));
  clients.push(client);
  return client;
}

let url: string | undefined;
async function overHttp(era: Era, who: keyof typeof TOKENS): Promise<Client> {
  if (url === undefined) {
    const tokens = Object.entries(TOKENS).flatMap(([name, token]) => ["--token", `${name}:${token}`]);
    url = (await serveCli(["serve", "--http", "127.0.0.1:0", "--config", config, "--spill-bytes", "2000", ...tokens], { cwd: dir, env, started })).url;
  }
  const client = new Client({ name: `skills-${era}-${who}`, version: "1.0.0" }, negotiation(era));
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKENS[who]}` } } }));
  clients.push(client);
  return client;
}

/** The listing once every server has listed its skills (servers connect after the client does). */
async function listed(skills: SkillsClient, count: number): Promise<Skill[]> {
  let entries: Skill[] = [];
  await until(async () => (entries = (await skills.list()).skills).length >= count);
  return entries;
}

const ALL = [
  "skill://docs/acme/large/SKILL.md",
  "skill://docs/acme/pdf-forms/SKILL.md",
  "skill://docs/acme/release-notes/SKILL.md",
  "skill://old/pdf-forms/SKILL.md",
  "skill://old/release-notes/SKILL.md",
];

describe.each(["modern", "legacy"] as const)("the skills extension over stdio, %s client", (era) => {
  it("lists every server's skills under skill://<server>/, and each file reads back verified against its digest", async () => {
    const client = await overStdio(era);
    expect(client.getProtocolEra()).toBe(era);
    expect(client.getServerCapabilities()?.extensions).toHaveProperty([SKILLS_EXTENSION_ID]);
    const skills = new SkillsClient(client);
    expect(skills.supported).toBe(true);
    const entries = await listed(skills, ALL.length);
    expect(entries.map((s) => s.uri).sort()).toEqual(ALL);
    const forms = entries.find((s) => s.uri === "skill://docs/acme/pdf-forms/SKILL.md") as Skill;
    expect(forms.frontmatter).toEqual({ name: "pdf-forms", description: "Fill in PDF forms field by field and check the result." });
    expect(forms.resources).toEqual([
      expect.objectContaining({ uri: "skill://docs/acme/pdf-forms/SKILL.md", digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) }),
      expect.objectContaining({ uri: "skill://docs/acme/pdf-forms/references/FIELDS.md" }),
    ]);
    const manifest = await skills.read(forms);
    expect(manifest).toMatchObject({ verified: true, uri: "skill://docs/acme/pdf-forms/SKILL.md" });
    expect(manifest.body).toContain("# Filling PDF forms (docs)");
    expect((await skills.read(forms, "references/FIELDS.md")).text).toContain("Every field has a name, a type and a page.");
    const large = entries.find((s) => s.uri === "skill://docs/acme/large/SKILL.md") as Skill;
    expect((await skills.read(large)).body?.length).toBeGreaterThan(30_000);
    // The 2025 server's skill, from its own server.
    const old = entries.find((s) => s.uri === "skill://old/pdf-forms/SKILL.md") as Skill;
    expect((await skills.read(old)).body).toContain("# Filling PDF forms (old)");
    // skills/get, by the URI a client is shown; one that is served nowhere is refused.
    expect((await skills.get("skill://old/release-notes/SKILL.md")).skill).toEqual(entries.find((s) => s.uri === "skill://old/release-notes/SKILL.md"));
    await expect(skills.get("skill://old/nothing/SKILL.md")).rejects.toThrow(/No skill is served at skill:\/\/old\/nothing\/SKILL\.md/);
    // A file the skill does not list is refused by the client before any request.
    await expect(skills.read(forms, "secrets.md")).rejects.toBeInstanceOf(SkillVerificationError);
  }, 60_000);
});

describe.each(["modern", "legacy"] as const)("the skills extension over HTTP, %s client", (era) => {
  it("shows each principal only the skills of the servers its policies show, and reads nothing of a hidden one", async () => {
    const bob = new SkillsClient(await overHttp(era, "bob"));
    const all = await listed(bob, ALL.length);
    expect(all.map((s) => s.uri).sort()).toEqual(ALL);
    // Larger than --spill-bytes: still whole, or its digest would not match.
    expect((await bob.read(all.find((s) => s.uri === "skill://docs/acme/large/SKILL.md") as Skill)).body?.length).toBeGreaterThan(30_000);
    const aliceClient = await overHttp(era, "alice");
    const alice = new SkillsClient(aliceClient);
    const hers = await listed(alice, 3);
    expect(hers.map((s) => s.uri).sort()).toEqual(ALL.filter((uri) => uri.startsWith("skill://docs/")));
    const forms = hers.find((s) => s.uri === "skill://docs/acme/pdf-forms/SKILL.md") as Skill;
    expect((await alice.read(forms)).body).toContain("# Filling PDF forms (docs)");
    await expect(alice.get("skill://old/pdf-forms/SKILL.md")).rejects.toThrow(/No skill is served/);
    await expect(aliceClient.readResource({ uri: "skill://old/pdf-forms/SKILL.md" })).rejects.toThrow(/No server offers the resource/);
    const listedResources = (await aliceClient.listResources()).resources.map((r) => r.uri);
    expect(listedResources.filter((uri) => uri.startsWith("skill://old/"))).toEqual([]);
  }, 60_000);
});
