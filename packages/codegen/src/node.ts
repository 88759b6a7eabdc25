// Node-only: writes files. The root entry stays free of node:fs so it can run anywhere.
export { writeModuleTree } from "./write-module-tree";
export type { WriteModuleTreeResult } from "./write-module-tree";
