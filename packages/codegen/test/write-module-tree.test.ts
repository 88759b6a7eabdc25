import { mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ModuleTree, UnsafePathError } from "../src/index";
import { writeModuleTree } from "../src/node";
import { HOST_CALL, codegenTools, readToolList } from "./tools";
import { runTsc } from "./typecheck";

/** Tool lists recorded from the reference servers over the real SDK client (see fixtures/README.md). */
const FIXTURES = { fs: "filesystem", memory: "memory", everything: "everything" } as const;

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "codegen-"));
  dirs.push(dir);
  return dir;
}
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

function referenceTree(): ModuleTree {
  const tree = new ModuleTree({ hostCallGlobal: HOST_CALL });
  for (const [server, file] of Object.entries(FIXTURES)) {
    tree.setServer(server, codegenTools(server, readToolList(new URL(`./fixtures/${file}.json`, import.meta.url))));
  }
  return tree;
}

describe("writeModuleTree", () => {
  it("writes the reference servers' modules as a tree that tsc --noEmit accepts", async () => {
    const tree = referenceTree();
    const outDir = join(await tempDir(), "nested", "mcp");
    const { files } = await writeModuleTree(tree, outDir);

    const fsFiles = (await readdir(join(outDir, "servers", "fs"))).sort();
    expect(fsFiles).toContain("readTextFile.ts");
    expect(fsFiles).toContain("index.ts");
    expect(fsFiles).toContain("schemas.ts");
    expect(fsFiles).toContain("readTextFile.schema.ts");
    // bridge, tsconfig, package.json, README, and per server its tool and .schema modules plus index.ts and schemas.ts.
    const tools = Object.keys(FIXTURES).reduce((n, server) => n + (tree.tools(server)?.length ?? 0), 0);
    expect(files).toBe(4 + 2 * tools + 2 * Object.keys(FIXTURES).length);

    expect(await readFile(join(outDir, "servers", "fs", "readTextFile.ts"), "utf8")).toBe(tree.get("mcp/servers/fs/readTextFile"));
    expect(await readFile(join(outDir, "bridge.ts"), "utf8")).toBe(tree.get("mcp/bridge"));
    expect(await readFile(join(outDir, "servers", "fs", "readTextFile.schema.ts"), "utf8")).toBe(tree.get("mcp/servers/fs/readTextFile.schema"));
    expect(await readFile(join(outDir, "servers", "fs", "schemas.ts"), "utf8")).toMatch(
      /^import \{ z \} from "zod";\n[\s\S]*export const readTextFileInput = z\.object\(/,
    );
    const tsconfig = JSON.parse(await readFile(join(outDir, "tsconfig.json"), "utf8"));
    expect(tsconfig.compilerOptions).toMatchObject({ strict: true, noEmit: true, paths: { "mcp/*": ["./*"] } });
    // Nothing in the written config names this machine: the tree can be committed or moved.
    expect(await readFile(join(outDir, "tsconfig.json"), "utf8")).not.toContain(tmpdir());
    expect(JSON.parse(await readFile(join(outDir, "package.json"), "utf8")).dependencies.zod).toMatch(/^\^4\./);

    const tsc = await runTsc(outDir);
    expect(tsc.output).toBe("");
    expect(tsc.ok).toBe(true);
  });

  it("fails tsc when a module is broken, so the check above means something", async () => {
    const tree = new ModuleTree({ hostCallGlobal: HOST_CALL });
    tree.setServer("fs", codegenTools("fs", readToolList(new URL("./fixtures/filesystem.json", import.meta.url))));
    const outDir = await tempDir();
    await writeModuleTree(tree, outDir);
    await writeFile(join(outDir, "use.ts"), `import { readTextFile } from "mcp/servers/fs";\nexport const r = readTextFile({ path: 1 });\n`);
    const tsc = await runTsc(outDir);
    expect(tsc.ok).toBe(false);
    expect(tsc.output).toContain("use.ts(2,");
  });

  it("refuses to write outside the output directory", async () => {
    class EscapingTree extends ModuleTree {
      override list(): string[] {
        return ["mcp/../../escaped"];
      }
      override get(): string {
        return "export {};\n";
      }
    }
    const dir = await tempDir();
    await expect(writeModuleTree(new EscapingTree({ hostCallGlobal: HOST_CALL }), join(dir, "a", "out"))).rejects.toBeInstanceOf(UnsafePathError);
    expect(await readdir(dir)).toEqual([]);
  });
});
