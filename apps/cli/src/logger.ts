import type { Logger } from "@codemux/core";
import { stderrSink, type LogSink } from "@codemux/http";
import { tracing } from "@codemux/pool";
import { trace } from "@opentelemetry/api";

export const LOG_LEVELS = ["error", "warn", "info", "debug"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The pool's line for a server that failed or was not started; `list` shows the same in its table. */
export const SERVER_STATE_LINE = /^\[[^\]\s]+\] (?:failed|not started): /;

/** Logs go to stderr: stdout carries only the MCP protocol when serving. Lines that `omit` matches are left out. */
export function stderrLogger(level: LogLevel, omit?: RegExp): Logger {
  const rank = LOG_LEVELS.indexOf(level);
  const at = (l: LogLevel) => (message: string) => {
    if (LOG_LEVELS.indexOf(l) <= rank && !omit?.test(message)) process.stderr.write(`codemux ${l}: ${message}${traceIds()}\n`);
  };
  return { error: at("error"), warn: at("warn"), info: at("info"), debug: at("debug") };
}

/** ` trace_id=... span_id=...` of the span a line is written in, with tracing on; empty otherwise. */
function traceIds(): string {
  if (!tracing()) return "";
  const span = trace.getActiveSpan();
  if (span === undefined) return "";
  const { traceId, spanId } = span.spanContext();
  return ` trace_id=${traceId} span_id=${spanId}`;
}

/** The HTTP server's JSON log lines at `level` and above; a record with no known level (a plugin's) is kept. */
export function levelSink(level: LogLevel, sink: LogSink = stderrSink): LogSink {
  const rank = LOG_LEVELS.indexOf(level);
  return (record) => {
    const at = LOG_LEVELS.indexOf(record.level as LogLevel);
    if (at <= rank) sink(record);
  };
}

/** Records (the config watcher's) as this logger's text lines: over stdio, logs are text, not JSON. */
export function loggerSink(logger: Logger): LogSink {
  return ({ level, msg, time: _time, ...fields }) => {
    const details = Object.entries(fields)
      .filter(([, value]) => !(Array.isArray(value) && value.length === 0))
      .map(([key, value]) => `${key}: ${Array.isArray(value) ? value.join(", ") : String(value)}`);
    const line = `${String(msg)}${details.length ? ` (${details.join("; ")})` : ""}`;
    (LOG_LEVELS.includes(level as LogLevel) ? logger[level as LogLevel] : logger.info)(line);
  };
}
