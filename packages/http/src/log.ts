import { maskUrl } from "@codemux/core";
import { randomUUID } from "node:crypto";

/** One structured log record; written as a JSON line. */
export type LogRecord = Record<string, unknown>;
export type LogSink = (record: LogRecord) => void;

/** JSON lines on stderr: stdout stays free (and clean) for whoever started the server. */
export const stderrSink: LogSink = (record) => {
  process.stderr.write(`${JSON.stringify(record)}\n`);
};

/**
 * Keeps a server up when whoever reads its output goes away (`serve --http ... 2>&1 | head -1`): an
 * EPIPE (or any write error) on stdout or stderr then loses only log lines. Installed once per stream.
 */
export function survivePipeErrors(): void {
  for (const stream of [process.stdout, process.stderr]) {
    if (!stream.listeners("error").includes(ignoreWriteError)) stream.on("error", ignoreWriteError);
  }
}

function ignoreWriteError(): void {
  // Nowhere left to report it: the stream that broke is where reports go.
}

const MAX_TARGET_CHARS = 500;
const ORIGIN = "http://codemux.invalid/";

/**
 * A request target cut to a bounded length, with credential query parameters masked (`?apikey=***`).
 * Names are matched decoded, as authentication reads them: `?api%6Bey=TOKEN` is masked too.
 */
export function maskTarget(target: string): string {
  const cut = target.slice(0, MAX_TARGET_CHARS);
  const query = cut.indexOf("?");
  if (query < 0) return cut;
  // Only the query is parsed (against a fixed origin): a path like `//host` cannot change what is masked.
  return cut.slice(0, query) + maskUrl(`${ORIGIN}${cut.slice(query)}`).slice(ORIGIN.length);
}

const REQUEST_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** The caller's `X-Request-Id` when it is a plain id, else a new one; echoed on the response and in the log line. */
export function requestIdOf(header: string | string[] | undefined): string {
  return typeof header === "string" && REQUEST_ID.test(header) ? header : randomUUID();
}
