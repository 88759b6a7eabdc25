import type { Logger } from "@codemux/pool";
import { stderrSink, type LogSink } from "@codemux/http";

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

/** The HTTP server's JSON log lines at `level` and above; a record with no known level (a plugin's) is kept. */
export function levelSink(level: LogLevel, sink: LogSink = stderrSink): LogSink {
  const rank = LOG_LEVELS.indexOf(level);
  return (record) => {
    const at = LOG_LEVELS.indexOf(record.level as LogLevel);
    if (at <= rank) sink(record);
  };
}
