// The stdio serving parts: Node streams only, behind the `@codemux/server/stdio` subpath.
export { serveStdio } from "./stdio";
export type { ServeStdioOptions } from "./stdio";
