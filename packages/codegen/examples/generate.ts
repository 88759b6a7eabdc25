import { ModuleTree } from "@codemux/codegen";
import { writeModuleTree } from "@codemux/codegen/node"; // Node-only: the root entry never touches the disk
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

const tree = new ModuleTree({ hostCallGlobal: "__host_call" }); // the sandbox's global for tool calls
tree.setServer("fs", [
  {
    server: "fs",
    name: "read_text_file",
    qualifiedName: "fs__read_text_file",
    functionName: "readTextFile",
    description: "Read the complete contents of a file as text.",
    inputSchema: {
      type: "object",
      properties: {
        path: { type: "string", description: "Path of the file." },
        head: { type: "number", description: "If provided, returns only the first N lines of the file" },
      },
      required: ["path"],
    },
    outputSchema: { type: "object", properties: { content: { type: "string" } }, required: ["content"] },
    annotations: { readOnlyHint: true },
  },
]);

console.log(tree.list("mcp/servers/fs")); // [ 'mcp/servers/fs', 'mcp/servers/fs/readTextFile' ]
console.log(tree.get("mcp/servers/fs/readTextFile"));
const out = await mkdtemp(join(tmpdir(), "mcp-modules-"));
const { files } = await writeModuleTree(tree, out); // then: npx tsc -p <out>
console.log(`${files} files written to ${out}`);
