import type { ServerResponse } from "node:http";
import type { HttpError } from "./errors";

/** Headers every answer carries: no caching of tool output, and no buffering by a proxy in front (SSE must flow). */
export const COMMON_HEADERS: Record<string, string> = {
  "cache-control": "no-store",
  "x-accel-buffering": "no",
  "x-content-type-options": "nosniff",
};

/** Sets extra headers (Allow, Retry-After, WWW-Authenticate) on an answer not yet started; returns it for chaining. */
export function withHeaders(res: ServerResponse, headers: Record<string, string>): ServerResponse {
  if (!res.headersSent) for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  return res;
}

/** Writes a JSON answer (compact) unless the response has started already. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) {
    if (!res.writableEnded) res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": String(Buffer.byteLength(text)) });
  res.end(text);
}

/** A 200 text answer. */
export function sendText(res: ServerResponse, text: string, contentType = "text/plain; charset=utf-8"): void {
  if (res.headersSent) {
    if (!res.writableEnded) res.end();
    return;
  }
  res.writeHead(200, { "content-type": contentType, "content-length": String(Buffer.byteLength(text)) });
  res.end(text);
}

/** The REST error shape `{ error: { code, message } }` with the error's status and headers. */
export function sendError(res: ServerResponse, error: HttpError): void {
  sendJson(withHeaders(res, error.headers), error.status, { error: { code: error.code.toLowerCase(), message: error.message, ...(error.data ?? {}) } });
}

/** The MCP endpoints answer errors as JSON-RPC (clients parse that), with the HTTP status the spec names. */
export function sendRpcError(res: ServerResponse, status: number, error: { code: number; message: string }): void {
  sendJson(res, status, { jsonrpc: "2.0", error, id: null });
}

/** A JSON-RPC error code for an HttpError on an MCP route: its own when it names one, parse errors -32700, the rest -32000 (server error). */
export function rpcCodeOf(error: HttpError): number {
  if (error.rpcCode !== undefined) return error.rpcCode;
  return error.code === "INVALID_JSON" ? -32700 : error.code === "BAD_REQUEST" ? -32600 : -32000;
}
