import { randomUUID } from "node:crypto";

/** One structured log record; written as a JSON line. */
export type LogRecord = Record<string, unknown>;
export type LogSink = (record: LogRecord) => void;

/** JSON lines on stderr: stdout stays free (and clean) for whoever started the server. */
export const stderrSink: LogSink = (record) => {
  process.stderr.write(`${JSON.stringify(record)}\n`);
};

const SECRET_PARAMS = /([?&](?:apikey|api_key|api-key|token|access_token|key)=)[^&#]*/gi;

/** A request target with credential query parameters masked (`?apikey=***`), cut to a bounded length. */
export function maskTarget(target: string): string {
  return target.slice(0, 500).replace(SECRET_PARAMS, "$1***");
}

const REQUEST_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** The caller's `X-Request-Id` when it is a plain id, else a new one; echoed on the response and in the log line. */
export function requestIdOf(header: string | string[] | undefined): string {
  return typeof header === "string" && REQUEST_ID.test(header) ? header : randomUUID();
}
