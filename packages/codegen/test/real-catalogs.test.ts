import { readdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { ModuleTree } from "../src/index";
import { writeModuleTree } from "../src/node";
import { HOST_CALL, codegenTools, readToolList } from "./tools";
import { runTsc } from "./typecheck";

/** Tool lists of 22 real servers (each file a tools/list `tools` array), copied from the shared benchmarks so this runs wherever the suite runs. */
const CATALOGS = fileURLToPath(new URL("./fixtures/real-catalogs", import.meta.url));

describe("the real catalogs (fixtures/real-catalogs)", () => {
  let outDir: string | undefined;
  afterAll(async () => {
    if (outDir !== undefined) await rm(outDir, { recursive: true, force: true });
  });

  it("generate all 332 tools of 22 servers into a tree that tsc --noEmit accepts", async () => {
    const files = readdirSync(CATALOGS).filter((file) => file.endsWith(".json"));
    const tree = new ModuleTree({ hostCallGlobal: HOST_CALL });
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
