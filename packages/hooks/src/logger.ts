import { stderrLogger as coreStderrLogger, type Logger } from "@codemux/core";

/** Warnings and errors on stderr (never stdout, the MCP stream over stdio), as `hooks warn: ...`, secrets masked: core's logger. */
export const hooksLogger: Logger = coreStderrLogger({ level: "warn", prefix: "hooks" });
