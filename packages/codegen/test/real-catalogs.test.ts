import { existsSync, readdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ModuleTree, writeModuleTree } from "../src/index";
import { codegenTools, readToolList } from "./tools";
import { repositoryRoot, runTsc } from "./typecheck";

/** Tool lists of 22 real servers (each file a tools/list `tools` array), kept beside the repository, not in it. */
const CATALOGS = join(repositoryRoot(), "..", "shared", "benchmarks", "real-catalogs");
const exists = existsSync(CATALOGS);

describe.skipIf(!exists)("the real catalogs (../shared/benchmarks/real-catalogs)", () => {
  let outDir: string | undefined;
  afterAll(async () => {
    if (outDir !== undefined) await rm(outDir, { recursive: true, force: true });
  });

  it("generate all 332 tools of 22 servers into a tree that tsc --noEmit accepts", async () => {
    const files = readdirSync(CATALOGS).filter((file) => file.endsWith(".json"));
    const tree = new ModuleTree();
    let tools = 0;
    for (const file of files) {
      const server = file.slice(0, -".json".length);
      const list = readToolList(join(CATALOGS, file));
      tree.setServer(server, codegenTools(server, list));
      tools += list.length;
    }
    expect(files).toHaveLength(22);
    expect(tools).toBe(332);
    expect(tree.list("mcp/servers")).toHaveLength(332 + 22);

    outDir = await mkdtemp(join(tmpdir(), "codegen-real-"));
    await writeModuleTree(tree, outDir);
    const tsc = await runTsc(outDir);
    expect(tsc.output).toBe("");
    expect(tsc.ok).toBe(true);
  });
});
