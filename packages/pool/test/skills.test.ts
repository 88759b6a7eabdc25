import { modernServerPath, skillServerPath } from "@codemux/test-servers";
import { afterEach, describe, expect, it } from "vitest";
import { ServerPool, listDownstreamSkills, readDownstreamSkill, type ServerSpec } from "../src/index";
import { stdioSpec } from "./helpers";

/** A server's skills through the pool's own client: the SDK v2 skill server of the test servers, over stdio. */
const pools: ServerPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});

function spec(name: string, script: string, args: string[] = []): ServerSpec {
  return { ...stdioSpec(name), transport: { type: "stdio", command: process.execPath, args: [script, ...args], env: {} } };
}

async function started(...specs: ServerSpec[]): Promise<ServerPool> {
  const pool = new ServerPool(specs, { retryDelaysMs: [] });
  pools.push(pool);
  await pool.start();
  return pool;
}

describe("a downstream server's skills", () => {
  it("are listed with their folder's path, name, description and files, and read checked against the listing", async () => {
    const pool = await started(spec("docs", skillServerPath, ["--prefix", "acme"]), spec("many", skillServerPath, ["--flood", "210"]));
    const many = await listDownstreamSkills(await pool.client("many"));
    expect(many.skills).toHaveLength(200);
    expect(many.leftOut).toBe(12);
    const client = await pool.client("docs");
    const { skills } = await listDownstreamSkills(client);
    expect(skills.map((s) => s.path)).toEqual(["acme/pdf-forms", "acme/release-notes"]);
    const forms = skills.find((s) => s.path === "acme/pdf-forms");
    expect(forms).toMatchObject({
      uri: "skill://acme/pdf-forms/SKILL.md",
      name: "pdf-forms",
      description: "Fill in PDF forms field by field and check the result.",
      files: ["references/FIELDS.md"],
    });
    expect((await readDownstreamSkill(client, forms!)).text).toContain("# Filling PDF forms");
    expect((await readDownstreamSkill(client, forms!, "references/FIELDS.md")).text).toContain("Every field has a name");
    await expect(readDownstreamSkill(client, forms!, "../release-notes/SKILL.md")).rejects.toThrow(/is not a file of the skill/);
  });

  it("are none for a server that does not declare the extension", async () => {
    const pool = await started(spec("m", modernServerPath));
    expect(await listDownstreamSkills(await pool.client("m"))).toEqual({ skills: [], leftOut: 0 });
  });
});
