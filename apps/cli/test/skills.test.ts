import { misbehavingServerPath } from "@codemux/test-servers";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./run-cli";

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "codemux-cli-skills-"));
  await writeFile(join(dir, "codemux.json"), JSON.stringify({ mcpServers: { bad: { command: process.execPath, args: [misbehavingServerPath] } } }));
  await writeFile(
    join(dir, "shout.ts"),
    '/** Says the text back in capitals. */\nimport { echo } from "mcp/servers/bad/echo";\n\nexport async function shout(input: { text: string }): Promise<string> {\n  return String(await echo({ text: input.text })).toUpperCase();\n}\n',
  );
  await writeFile(
    join(dir, "broken.ts"),
    "/** Broken. */\nexport async function broken(input: { text: string }): Promise<number> {\n  return input.text;\n}\n",
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const codemux = (args: string[], input = "") =>
  runCli(["--no-cache", ...args], { cwd: dir, env: { PATH: process.env.PATH ?? "", HOME: dir, CODEMUX_HOME: join(dir, "home") }, input });

describe("codemux skills", () => {
  it("saves a file as a skill, lists it, lets exec import it, and deletes it", async () => {
    const saved = await codemux(["skills", "save", "shout", "shout.ts"]);
    expect(saved).toMatchObject({ code: 0 });
    expect(saved.stdout).toContain("Saved mcp/skills/shout: shout(input: { text: string; }): Promise<string>");
    expect(await readdir(join(dir, "home", "skills", "local"))).toEqual(["shout.json", "shout.ts"]);

    const listed = await codemux(["skills", "list"]);
    expect(listed.stdout).toBe("mcp/skills/shout  shout(input: { text: string; }): Promise<string>\n  Says the text back in capitals.\n");

    const ran = await codemux(["exec", "-"], 'import { shout } from "mcp/skills/shout"; export default await shout({ text: "cli" });');
    expect(JSON.parse(ran.stdout)).toMatchObject({ result: "CLI" });

    expect((await codemux(["skills", "delete", "shout"])).stdout).toBe("Deleted skill shout.\n");
    expect((await codemux(["skills", "list"])).stdout).toMatch(/^No skills yet/);
  });

  it("refuses a skill that does not type-check, with its line, and exits 1", async () => {
    const refused = await codemux(["skills", "save", "broken", "broken.ts"]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(
      /Skill "broken" was not saved; it does not type-check against the current tool modules:\nline 3, column 3: Type 'string' is not assignable to type 'number'/,
    );
  });
});
