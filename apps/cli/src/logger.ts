import type { Logger } from "@codemux/pool";

export const LOG_LEVELS = ["error", "warn", "info", "debug"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Logs go to stderr: stdout carries only the MCP protocol when serving. */
export function stderrLogger(level: LogLevel): Logger {
  const rank = LOG_LEVELS.indexOf(level);
  const at = (l: LogLevel) => (message: string) => {
    if (LOG_LEVELS.indexOf(l) <= rank) process.stderr.write(`codemux ${l}: ${message}\n`);
  };
  return { error: at("error"), warn: at("warn"), info: at("info"), debug: at("debug") };
}
