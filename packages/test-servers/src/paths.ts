// Resolved against the built index.js, which bundles this file: the servers are built beside it.
import { fileURLToPath } from "node:url";

/** Absolute path of the built misbehaving server (run it with `node`). */
export const misbehavingServerPath: string = fileURLToPath(new URL("./misbehaving.js", import.meta.url));

/** Absolute path of the built catalog replay server (run it with `node PATH CATALOG.json`). */
export const replayServerPath: string = fileURLToPath(new URL("./replay.js", import.meta.url));

/** Absolute path of the built asking server (run it with `node`): questions and log lines in and after calls, results as given. */
export const askingServerPath: string = fileURLToPath(new URL("./asking.js", import.meta.url));

/** Absolute path of the built 2026-era server on SDK v2 (run it with `node`; `--legacy reject` for modern-only, `--http PORT`). */
export const modernServerPath: string = fileURLToPath(new URL("./modern.js", import.meta.url));

/** Absolute path of the built server that offers skills on SDK v2 (run it with `node`; `--name`, `--prefix`, `--flood N`, `--large-chars N`). */
export const skillServerPath: string = fileURLToPath(new URL("./skill-server.js", import.meta.url));
/** Absolute path of the built 2026-era server that answers calls with tasks of the Tasks extension (run it with `node`). */
export const taskServerPath: string = fileURLToPath(new URL("./task-server.js", import.meta.url));

/** Absolute path of the built SDK v2 `McpServer` whose tool marks parameters with `x-mcp-header` (run it with `node`; `--http PORT`, `--log FILE`). */
export const paramHeaderServerPath: string = fileURLToPath(new URL("./param-headers.js", import.meta.url));

/** Absolute path of the conformance referee's everything-server, vendored (run it with `node`, `PORT=0`: it prints `MCP endpoint: URL`). */
export const conformanceServerPath: string = fileURLToPath(new URL("./conformance-everything-server.js", import.meta.url));
/** Absolute path of the built tasks fixture of the conformance run (run it with `node`; modern only; `--http PORT`): the tools the referee's tasks-* scenarios call. */
export const conformanceTasksServerPath: string = fileURLToPath(new URL("./conformance-tasks-server.js", import.meta.url));
/** Absolute path of the built server with an MCP App (run it with `node`; `--name N`, `--uri ui://...`). */
export const appServerPath: string = fileURLToPath(new URL("./app-server.js", import.meta.url));
/** Absolute path of the browser tests' host page script (the ext-apps AppBridge; `window.renderApp`, wired to `window.hostCallTool`). */
export const appHostScriptPath: string = fileURLToPath(new URL("./app-host.global.js", import.meta.url));
