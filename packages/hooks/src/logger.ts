import type { Logger } from "@codemux/core";

/** Warnings and errors on stderr, never stdout (the MCP stream over stdio). */
export const stderrLogger: Logger = {
  debug() {},
  info() {},
  warn: (message) => void process.stderr.write(`[hooks] ${message}\n`),
  error: (message) => void process.stderr.write(`[hooks] ${message}\n`),
};
