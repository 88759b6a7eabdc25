import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkSkill, typeCheckSkill } from "./typecheck";

const HOST_SECRET = "HOST-SECRET-4242";
let dir: string;
let hostFile: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "codemux-typecheck-"));
  hostFile = join(dir, "host-secret.ts");
  await writeFile(hostFile, `export const hostSecret = "${HOST_SECRET}" as const;\nexport type Secret = { value: "${HOST_SECRET}" };\n`);
  await writeFile(join(dir, "plain.txt"), `${HOST_SECRET}\n`);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A skill that imports `specifier` and forces its value into an error message (as an attacker would, to read it back). */
const leaking = (specifier: string) => `import { hostSecret } from ${JSON.stringify(specifier)};
export async function leak(input: { n: number }): Promise<number> {
  const n: number = hostSecret;
  return n + input.n;
}
`;
const check = (code: string, modules: Record<string, string> = {}) => checkSkill(ts, { name: "leak", specifier: "mcp/skills/leak", code, modules }, 10);

describe("the skill type checker sees only its in-memory modules", () => {
  it("still checks against the ES library and the modules it was given", () => {
    const code = `import { twice } from "mcp/servers/m/twice";
export async function leak(input: { text: string }): Promise<string[]> {
  return [...new Set([input.text.padStart(3), await twice(1)].map(String))];
}
`;
    const result = check(code, { "mcp/servers/m/twice": "export async function twice(n: number): Promise<number> { return n * 2; }" });
    expect(result).toEqual({
      ok: true,
      signature: "leak(input: { text: string; }): Promise<string[]>",
      imports: [{ specifier: "mcp/servers/m/twice", names: ["twice"] }],
    });
  });

  it("cannot import a host file by absolute path, by a relative path that climbs out, or through mcp/..", () => {
    const climbing = relative("/codemux-skill/mcp/skills", hostFile);
    for (const specifier of [hostFile, hostFile.replace(/\.ts$/, ""), climbing, `mcp/${"../".repeat(8)}${hostFile.slice(1)}`]) {
      const result = check(leaking(specifier));
      expect(result.ok, specifier).toBe(false);
      const text = JSON.stringify(result);
      expect(text).toMatch(/Cannot find module/);
      expect(text).not.toContain(HOST_SECRET);
    }
  });

  it("reads no file named by a reference, a type import or a package name", () => {
    for (const code of [
      `/// <reference path=${JSON.stringify(join(dir, "plain.txt"))} />\n${leaking("mcp/servers/none/x")}`,
      `/// <reference path=${JSON.stringify(hostFile)} />\nexport async function leak(input: { n: number }): Promise<number> { const s: number = hostSecret; return s; }\n`,
      `export async function leak(input: { n: number }): Promise<number> { const s: import(${JSON.stringify(hostFile)}).Secret = { value: 1 }; return input.n; }\n`,
      `/// <reference types="node" />\nimport { readFileSync } from "node:fs";\nexport async function leak(input: { n: number }): Promise<number> { return readFileSync("/etc/passwd").length; }\n`,
      `import ts from "typescript";\nexport async function leak(input: { n: number }): Promise<number> { const v: number = ts.version; return v; }\n`,
    ]) {
      const result = check(code);
      expect(result.ok).toBe(false);
      expect(JSON.stringify(result)).not.toContain(HOST_SECRET);
      expect(JSON.stringify(result)).not.toMatch(/\d+\.\d+\.\d+/);
    }
  });
});

describe("typeCheckSkill", () => {
  it("runs the check in its worker thread, with every function the check calls", async () => {
    const code = "export async function shout(input: { text: string }): Promise<string> {\n  return input.text.toUpperCase();\n}\n";
    const result = await typeCheckSkill({ name: "shout", specifier: "mcp/skills/shout", code, modules: {} });
    expect(result).toEqual({ ok: true, signature: "shout(input: { text: string; }): Promise<string>", imports: [] });
  });
});
