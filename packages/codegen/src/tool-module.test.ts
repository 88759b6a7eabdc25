import { HOST_CALL } from "../test/tools";
import { describe, expect, it } from "vitest";
import { typeCheck } from "../test/typecheck";
import { renderBridgeModule } from "./bridge-module";
import type { CodegenTool } from "./codegen-tool";
import { renderToolModule } from "./tool-module";

const readTextFile: CodegenTool = {
  server: "fs",
  name: "read_text_file",
  qualifiedName: "fs__read_text_file",
  functionName: "readTextFile",
  title: "Read Text File",
  description: "Read the complete contents of a file from the file system as text.",
  inputSchema: {
    type: "object",
    properties: {
      path: { type: "string", description: "Path of the file." },
      head: { type: "number", description: "If provided, returns only the first N lines of the file" },
    },
    required: ["path"],
    additionalProperties: false,
    $schema: "http://json-schema.org/draft-07/schema#",
  },
  outputSchema: { type: "object", properties: { content: { type: "string" } }, required: ["content"], additionalProperties: false },
  annotations: { readOnlyHint: true, openWorldHint: false },
};

describe("renderToolModule", () => {
  it("writes the input and output types and a function that calls the tool by its qualified name", () => {
    expect(renderToolModule(readTextFile)).toBe(`import { callTool } from "mcp/bridge";

export interface ReadTextFileInput {
  /** Path of the file. */
  path: string;
  /** If provided, returns only the first N lines of the file */
  head?: number;
}

export interface ReadTextFileOutput {
  content: string;
}

/**
 * Read the complete contents of a file from the file system as text.
 *
 * Hints: read-only.
 */
export async function readTextFile(input: ReadTextFileInput): Promise<ReadTextFileOutput> {
  return (await callTool("fs__read_text_file", input)) as ReadTextFileOutput;
}
`);
  });

  it("types the output unknown without an outputSchema, and keeps a title that says more than the name", () => {
    const source = renderToolModule({
      ...readTextFile,
      name: "read_file",
      qualifiedName: "fs__read_file",
      functionName: "readFile",
      title: "Read File (Deprecated)",
      outputSchema: undefined,
      annotations: { destructiveHint: true, idempotentHint: true, openWorldHint: true },
    });
    expect(source).toContain("export type ReadFileOutput = unknown;");
    expect(source).toContain(" * Read File (Deprecated)\n *\n * Read the complete");
    expect(source).toContain("Hints: destructive (may delete or overwrite data), idempotent, open world (reaches external systems).");
  });

  it("lets a tool without required arguments be called without any", () => {
    const source = renderToolModule({ ...readTextFile, name: "read_graph", functionName: "readGraph", inputSchema: { type: "object", properties: {} } });
    expect(source).toContain("export type ReadGraphInput = Record<string, unknown>;");
    expect(source).toContain("export async function readGraph(input: ReadGraphInput = {}): Promise<ReadGraphOutput> {");
  });

  it("does not let a tool named callTool shadow the bridge's callTool", () => {
    const source = renderToolModule({ ...readTextFile, name: "call_tool", qualifiedName: "x__call_tool", functionName: "callTool" });
    expect(source).toContain(`import { callTool as bridgeCallTool } from "mcp/bridge";`);
    expect(source).toContain(`return (await bridgeCallTool("x__call_tool", input)) as CallToolOutput;`);
  });

  it("produces modules that type-check against the bridge and can be called as documented", () => {
    const modules = {
      "mcp/bridge": renderBridgeModule(HOST_CALL),
      "mcp/fs/readTextFile": renderToolModule(readTextFile),
      "mcp/x/callTool": renderToolModule({ ...readTextFile, functionName: "callTool" }),
      "mcp/m/readGraph": renderToolModule({ ...readTextFile, functionName: "readGraph", inputSchema: { type: "object" } }),
      use: `import { readTextFile } from "mcp/fs/readTextFile";
import { readGraph } from "mcp/m/readGraph";
const text: Promise<string> = readTextFile({ path: "a" }).then((r) => r.content);
const graph = readGraph();
// @ts-expect-error path is required
readTextFile({ head: 1 });
export { text, graph };
`,
    };
    expect(typeCheck(modules)).toEqual([]);
  });
});
