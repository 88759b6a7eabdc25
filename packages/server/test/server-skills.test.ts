import { silentLogger, type SessionInfo } from "@codemux/core";
import { modernServerPath, skillServerPath, until } from "@codemux/test-servers";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Codemux, policiesOf } from "../src/index";
import { config, connect, node, textOf, servicesOf } from "./helpers";

/**
 * Downstream servers' skills (the skills extension of 2026-07-28, served by SDK v2's SkillCatalog over stdio):
 * aggregated under mcp/server-skills/<server>/<path>, apart from codemux's own saved skills, found by
 * search_tools as kind "skill", read through read_module and checked against the server's listing.
 */
let dir: string;
let core: Codemux;
const ops: SessionInfo = { id: "ops-session", principal: "oauth:https://idp.example#7", groups: ["ops"] };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "codemux-server-skills-"));
  const policies = policiesOf({ policies: { rules: [{ name: "ops", groups: ["ops"], tools: ["other__*"] }] } }, "codemux.json");
  const servers = {
    docs: node(skillServerPath, "--name", "docs", "--prefix", "acme", "--large-chars", "300000"),
    // Both eras: the others speak 2026-07-28; this one 2025, whose change notifications reach codemux without a listen stream.
    other: { ...node(skillServerPath, "--name", "other"), protocol: "2025-11-25" },
    many: node(skillServerPath, "--name", "many", "--flood", "230"),
  };
  core = new Codemux({ config: config(servers), dataDir: dir, ...(policies ? { policies } : {}) });
  core.start();
  await core.ready(10_000);
  await until(() => servicesOf(core).serverSkills.list(core.session()).length === 3);
});
afterAll(async () => {
  await core.close();
  await rm(dir, { recursive: true, force: true });
});

const run = async (name: string, args: Record<string, unknown>, session: SessionInfo = core.session()) =>
  core.surface("code").callTool(name, args, { session, origin: "cli" });

describe("skills of downstream servers", () => {
  it("are found by search_tools as kind skill, each under its own server: two servers' skills of one name both show", async () => {
    const found = textOf(await run("search_tools", { query: "fill in a pdf form" }));
    expect(found).toContain("docs/acme/pdf-forms  mcp/server-skills/docs/acme/pdf-forms  (skill)");
    expect(found).toContain('  read_module("mcp/server-skills/docs/acme/pdf-forms")  instructions (SKILL.md) with 1 file');
    expect(found).toContain("  Fill in PDF forms field by field and check the result.");
    expect(found).toContain("other/pdf-forms  mcp/server-skills/other/pdf-forms  (skill)");
    // Their SKILL.md files are resources too, but search shows each skill once, as a skill.
    expect(found).not.toContain("SKILL.md  mcp/resources");
    expect(textOf(await run("search_tools", { query: "release notes", server: "other" }))).toMatch(
      /^other\/release-notes {2}mcp\/server-skills\/other\/release-notes {2}\(skill\)/,
    );
  });

  it("are read through read_module from their own server, SKILL.md and the files it lists, checked against the listing", async () => {
    const docs = textOf(await run("read_module", { specifier: "mcp/server-skills/docs/acme/pdf-forms" }));
    expect(docs).toContain(
      '<!-- Skill "pdf-forms" of server "docs" (skill://acme/pdf-forms/SKILL.md): instructions written by that server, not by codemux or the user. -->',
    );
    expect(docs).toContain('read_module("mcp/server-skills/docs/acme/pdf-forms/references/FIELDS.md")');
    expect(docs).toContain("# Filling PDF forms (docs)");
    expect(textOf(await run("read_module", { specifier: "mcp/server-skills/other/pdf-forms" }))).toContain("# Filling PDF forms (other)");
    expect(textOf(await run("read_module", { specifier: "mcp/server-skills/docs/acme/pdf-forms/references/FIELDS.md" }))).toContain(
      "Every field has a name, a type and a page.",
    );

    const unlisted = await run("read_module", { specifier: "mcp/server-skills/docs/acme/pdf-forms/secrets.md" });
    expect(unlisted.isError).toBe(true);
    expect(textOf(unlisted)).toMatch(
      /^Reading the skill "docs\/acme\/pdf-forms" failed: skill:\/\/acme\/pdf-forms\/secrets\.md is not a file of the skill skill:\/\/acme\/pdf-forms\/SKILL\.md\. Its files: references\/FIELDS\.md\.$/,
    );
    const unknown = await run("read_module", { specifier: "mcp/server-skills/docs/nothing-here" });
    expect(textOf(unknown)).toMatch(/^No skill "mcp\/server-skills\/docs\/nothing-here"\. Skills of the servers: mcp\/server-skills\/docs\/acme\/large, /);
    const climbing = await run("read_module", { specifier: "mcp/server-skills/docs/acme/pdf-forms/../../../skills/x" });
    expect(textOf(climbing)).toContain('climbs with ".."');
  });

  it("are listed by list_modules: counted at the root, one a line under mcp/server-skills", async () => {
    expect(textOf(await run("list_modules", {}))).toContain("mcp/server-skills  (205 skills of 3 servers: instructions, read with read_module)");
    expect(textOf(await run("list_modules", {}, ops))).toContain("mcp/server-skills  (2 skills of 1 server: instructions, read with read_module)");
    expect(textOf(await run("list_modules", { path: "mcp/server-skills/docs" }))).toBe(
      [
        "mcp/server-skills/docs/acme/large\n  A skill with a very long body.",
        "mcp/server-skills/docs/acme/pdf-forms\n  Fill in PDF forms field by field and check the result.",
        "mcp/server-skills/docs/acme/release-notes\n  Write release notes from merged pull requests.",
      ].join("\n"),
    );
    expect(textOf(await run("list_modules", { path: "mcp/server-skills/docs" }, ops))).toBe('No skills of a server named "docs".');
  });

  it("leave mcp/skills/ to codemux's own saved skills and add nothing to the upfront tool list", async () => {
    expect(textOf(await run("list_modules", { path: "mcp/skills" }))).toBe("No skills yet: save_skill saves a snippet that worked as mcp/skills/<name>.");
    expect(textOf(await run("read_module", { specifier: "mcp/skills/pdf-forms" }))).toMatch(/^No module "mcp\/skills\/pdf-forms"/);
    const withSkills = await connect({ config: core.config, dataDir: join(dir, "upfront-a") });
    const without = await connect({ config: config({ m: node(modernServerPath) }), dataDir: join(dir, "upfront-b") });
    try {
      expect((await withSkills.client.listTools()).tools).toEqual((await without.client.listTools()).tools);
    } finally {
      await Promise.all([withSkills.close(), without.close()]);
    }
  });

  it("are bounded: a server's skills beyond 200 are left out, and a SKILL.md listed larger than 256 KiB is refused before it is read", async () => {
    const many = servicesOf(core)
      .serverSkills.list(core.session())
      .find((s) => s.server === "many");
    expect(many?.skills).toHaveLength(200);
    const large = await run("read_module", { specifier: "mcp/server-skills/docs/acme/large" });
    expect(large.isError).toBe(true);
    expect(textOf(large)).toMatch(
      /^Reading the skill "docs\/acme\/large" failed: skill:\/\/acme\/large\/SKILL\.md is 3000\d\d bytes long; codemux reads skill files of at most 262144 bytes\.$/,
    );
  });

  it("are hidden, in search and in reading, from a session whose policy hides their server", async () => {
    expect(textOf(await run("search_tools", { query: "fill in a pdf form" }, ops))).not.toContain("docs/");
    expect(textOf(await run("search_tools", { query: "fill in a pdf form" }, ops))).toContain("other/pdf-forms");
    const hidden = await run("read_module", { specifier: "mcp/server-skills/docs/acme/pdf-forms" }, ops);
    expect(hidden.isError).toBe(true);
    // Answered as for a server that is not there: the other servers' skills are named, none of the hidden one's.
    expect(textOf(hidden)).toBe(
      'No skill "mcp/server-skills/docs/acme/pdf-forms". Skills of the servers: mcp/server-skills/other/pdf-forms, mcp/server-skills/other/release-notes. search_tools finds them by task.',
    );
  });

  it("are listed again when their server says its resources changed (the extension's announcement of a changed skill set)", async () => {
    expect(core.status().map((s) => [s.name, s.protocol])).toEqual([
      ["docs", "2026-07-28"],
      ["other", "2025-11-25"],
      ["many", "2026-07-28"],
    ]);
    expect(textOf(await run("call_tool", { name: "other__add_skill", args: { name: "meeting-notes" } }))).toContain('"listChanged":true');
    await until(async () =>
      textOf(await run("search_tools", { query: "meeting notes", server: "other" })).includes(
        "other/meeting-notes  mcp/server-skills/other/meeting-notes  (skill)",
      ),
    );
    expect(textOf(await run("read_module", { specifier: "mcp/server-skills/other/meeting-notes" }))).toContain("# meeting-notes");
  });

  it("of a server with per-principal credentials are not listed from the operator's connection (nor warned about); the others are", async () => {
    const warnings: string[] = [];
    const alice: SessionInfo = { id: "alice-session", principal: "token:alice" };
    const own = new Codemux({
      config: config({
        shared: node(skillServerPath, "--name", "shared"),
        mine: { ...node(skillServerPath, "--name", "mine"), credentials: "per-principal", perPrincipal: { "token:alice": { env: { KEY: "alice" } } } },
      }),
      dataDir: dir,
      logger: { ...silentLogger, warn: (message) => void warnings.push(message) },
    });
    try {
      own.start();
      await own.ready(10_000);
      // Both listing connections reported their tools together; once the shared server's skills are in, mine's would be too.
      await until(() => servicesOf(own).serverSkills.list(alice).length > 0);
      expect(
        servicesOf(own)
          .serverSkills.list(alice)
          .map((s) => s.server),
      ).toEqual(["shared"]);
      expect(warnings.filter((w) => w.includes("could not list its skills"))).toEqual([]);
    } finally {
      await own.close();
    }
  });
});
