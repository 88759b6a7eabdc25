import { LOG_LEVELS, stderrLogger, type LogLevel, type Logger } from "@codemux/core";
import { stderrSink, type LogSink } from "@codemux/http";
import { tracing } from "@codemux/pool";
import { trace } from "@opentelemetry/api";

/** The pool's line for a server that failed or was not started; `list` shows the same in its table. */
export const SERVER_STATE_LINE = /^\[[^\]\s]+\] (?:failed|not started): /;

/**
 * Core's stderr logger (secrets masked) writing `codemux <level>: ...` to stderr: stdout carries only the MCP protocol
 * when serving. Lines whose message `omit` matches are left out.
 */
export function cliLogger(level: LogLevel, omit?: RegExp): Logger {
  return stderrLogger({
    level,
    write: (line) => {
      if (!omit?.test(line.slice(line.indexOf(": ") + 2))) process.stderr.write(`${line}${traceIds()}\n`);
    },
  });
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
