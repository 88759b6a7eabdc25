import { Catalog } from "@codemux/catalog";

const catalog = new Catalog();
catalog.setServerTools("fs", [
  {
    name: "read_text_file",
    description: "Read the complete contents of a file as text.",
    inputSchema: { type: "object", properties: { path: { type: "string" }, head: { type: "number" } }, required: ["path"] },
  },
]);
catalog.setServerTools("github", [
  { name: "create_issue", description: "Create a new issue in a GitHub repository.", inputSchema: { type: "object", properties: {} } },
]);

const [hit] = catalog.search("open a bug report on a repo", { limit: 5 });
console.log(hit?.entry.qualifiedName); // github__create_issue
const entry = catalog.resolve("fs__read_text_file");
console.log(entry.functionName, entry.moduleSpecifier, entry.signature);
// readTextFile mcp/servers/fs/readTextFile readTextFile({ path: string, head?: number })
