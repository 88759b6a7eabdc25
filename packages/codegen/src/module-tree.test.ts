import { describe, expect, it } from "vitest";
import { HOST_CALL } from "../test/tools";
import { typeCheck } from "../test/typecheck";
import type { CodegenTool } from "./codegen-tool";
import { InvalidFunctionNameError, InvalidServerNameError } from "./errors";
import { ModuleTree } from "./module-tree";

function tool(server: string, name: string, functionName: string): CodegenTool {
  return {
    server,
    name,
    qualifiedName: `${server}__${name}`,
    functionName,
    description: `The ${name} tool.`,
    inputSchema: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
  };
}

function fsTree(): ModuleTree {
  const tree = new ModuleTree({ hostCallGlobal: HOST_CALL });
  tree.setServer("fs", [tool("fs", "read_text_file", "readTextFile"), tool("fs", "write_file", "writeFile")]);
  tree.setServer("fs2", [tool("fs2", "list", "list")]);
  tree.setServer("empty", []);
  return tree;
}

describe("ModuleTree", () => {
  it("lists specifiers under a prefix by whole path segments, sorted", () => {
    const tree = fsTree();
    expect(tree.list("mcp/servers/fs")).toEqual(["mcp/servers/fs", "mcp/servers/fs/readTextFile", "mcp/servers/fs/writeFile"]);
    expect(tree.list("mcp/servers/fs/")).toEqual(tree.list("mcp/servers/fs"));
    expect(tree.list()).toEqual([
      "mcp/bridge",
      "mcp/servers/empty",
      "mcp/servers/fs",
      "mcp/servers/fs/readTextFile",
      "mcp/servers/fs/writeFile",
      "mcp/servers/fs2",
      "mcp/servers/fs2/list",
    ]);
    expect(tree.list("mcp/servers/nope")).toEqual([]);
  });

  it("gets the bridge, a server index (with or without /index) and a tool module", () => {
    const tree = fsTree();
    expect(tree.get("mcp/bridge")).toContain("export async function callTool(");
    const index = tree.get("mcp/servers/fs");
    expect(index).toBe(tree.get("mcp/servers/fs/index"));
    expect(index).toContain(`export { readTextFile, type ReadTextFileInput, type ReadTextFileOutput } from "mcp/servers/fs/readTextFile";`);
    expect(index).toContain(`export { writeFile, type WriteFileInput, type WriteFileOutput } from "mcp/servers/fs/writeFile";`);
    expect(tree.get("mcp/servers/fs/readTextFile")).toContain(`callTool("fs__read_text_file", input)`);
    expect(tree.get("mcp/servers/fs/readTextFile.ts")).toBe(tree.get("mcp/servers/fs/readTextFile"));
    expect(tree.get("mcp/servers/fs/nope")).toBeUndefined();
    expect(tree.get("mcp/servers/fs/nope.schema")).toBeUndefined();
    expect(tree.get("mcp/servers/fs/readTextFile/x")).toBeUndefined();
    expect(tree.get("mcp/servers/fs/__proto__")).toBeUndefined();
    expect(tree.get("servers/fs")).toBeUndefined();
  });

  it("gets a tool's JSON Schema as the module .../<function>.schema, which type-checks beside a snippet that imports it", () => {
    const tree = fsTree();
    const source = tree.get("mcp/servers/fs/readTextFile.schema") as string;
    expect(source).toContain("JSON Schema of the input of readTextFile (fs__read_text_file).");
    expect(source).toContain('export const schema = {\n  "type": "object",');
    expect(source).not.toContain("outputSchema");
    expect(tree.get("mcp/servers/fs/readTextFile.schema.ts")).toBe(source);
    const use = 'import { schema } from "mcp/servers/fs/readTextFile.schema";\nexport const required: string[] = schema.required;\n';
    expect(typeCheck({ "mcp/servers/fs/readTextFile.schema": source, use })).toEqual([]);
  });

  it("replaces a server's modules on setServer and drops them on removeServer", () => {
    const tree = fsTree();
    tree.setServer("fs", [tool("fs", "move_file", "moveFile")]);
    expect(tree.list("mcp/servers/fs")).toEqual(["mcp/servers/fs", "mcp/servers/fs/moveFile"]);
    expect(tree.get("mcp/servers/fs/readTextFile")).toBeUndefined();
    expect(tree.get("mcp/servers/fs")).not.toContain("readTextFile");
    tree.removeServer("fs");
    expect(tree.list("mcp/servers/fs")).toEqual([]);
    expect(tree.get("mcp/servers/fs")).toBeUndefined();
    expect(tree.serverNames()).toEqual(["empty", "fs2"]);
  });

  it("rejects server names that cannot be a path segment", () => {
    const tree = new ModuleTree({ hostCallGlobal: HOST_CALL });
    for (const server of ["", "../x", "a/b", "a__b", "a.b", "-a"]) {
      expect(() => tree.setServer(server, [])).toThrow(InvalidServerNameError);
    }
  });

  it("rejects function names that would not compile or would collide, leaving the old modules", () => {
    const tree = fsTree();
    const bad: [string, string][] = [
      ["delete", "is a reserved word"],
      ["read-file", "is not a JavaScript identifier"],
      ["index", "would collide with the server's index module"],
      ["Schemas", "would collide with the server's schemas module"],
    ];
    for (const [functionName, reason] of bad) {
      const error = (() => {
        try {
          tree.setServer("fs", [tool("fs", "x", functionName)]);
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(InvalidFunctionNameError);
      expect(error).toMatchObject({ code: "INVALID_FUNCTION_NAME", message: `Tool function "${functionName}" of server "fs" ${reason}.` });
    }
    expect(() => tree.setServer("fs", [tool("fs", "a", "readFile"), tool("fs", "b", "readFile")])).toThrow("is used by two tools");
    expect(() => tree.setServer("fs", [tool("fs", "a", "readFile"), tool("fs", "b", "ReadFile")])).toThrow("gives the type name ReadFileInput");
    expect(tree.list("mcp/servers/fs")).toHaveLength(3);
  });

  it("produces a tree whose index and modules type-check together", () => {
    const tree = fsTree();
    const modules = Object.fromEntries(tree.list().map((specifier) => [specifier, tree.get(specifier) as string]));
    modules.use = `import * as empty from "mcp/servers/empty";
import { readTextFile, writeFile, type WriteFileInput } from "mcp/servers/fs";
export const none: object = empty;
const input: WriteFileInput = { q: "x" };
export const both = Promise.all([readTextFile({ q: "a" }), writeFile(input)]);
`;
    expect(typeCheck(modules)).toEqual([]);
  });

  it("with a visibility, has no module for a hidden tool and an index of the shown tools only", () => {
    const tree = fsTree();
    const visible = (name: string) => name === "fs__read_text_file";
    expect(tree.get("mcp/servers/fs/writeFile", visible)).toBeUndefined();
    expect(tree.get("mcp/servers/fs/writeFile.schema", visible)).toBeUndefined();
    expect(tree.get("mcp/servers/fs/readTextFile", visible)).toBe(tree.get("mcp/servers/fs/readTextFile"));
    expect(tree.get("mcp/servers/fs", visible)).toContain("readTextFile");
    expect(tree.get("mcp/servers/fs", visible)).not.toContain("writeFile");
    expect(tree.get("mcp/servers/fs2", visible)).toBeUndefined();
    expect(tree.list("", visible)).toEqual(["mcp/bridge", "mcp/servers/fs", "mcp/servers/fs/readTextFile"]);
  });
});
