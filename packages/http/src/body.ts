import type { IncomingMessage } from "node:http";
import { HttpError } from "./errors";

/**
 * Reads a request body up to `maxBytes`: a declared Content-Length over the cap is refused before
 * anything is read, and an undeclared (chunked) body is cut off as soon as it passes the cap. The
 * time it may take is bounded by the server's `requestTimeout`.
 */
export async function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(req.headers["content-length"] ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);
  const chunks: Buffer[] = [];
  let size = 0;
  return new Promise<Buffer>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        cleanup();
        // Stop reading: the rest of the body is never buffered; the answer closes the connection.
        req.pause();
        reject(tooLarge(maxBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(new HttpError("BAD_REQUEST", `The request body could not be read (${error.message.slice(0, 100)}).`));
    };
    const onAborted = () => {
      cleanup();
      reject(new HttpError("BAD_REQUEST", "The client closed the connection before sending the whole body."));
    };
    const cleanup = () => {
      req.off("data", onData).off("end", onEnd).off("error", onError).off("aborted", onAborted);
    };
    req.on("data", onData).on("end", onEnd).on("error", onError).on("aborted", onAborted);
  });
}

function tooLarge(maxBytes: number): HttpError {
  return new HttpError("TOO_LARGE", `The request body is larger than ${maxBytes} bytes; send less, or raise --max-body-bytes on the server.`, {
    data: { limit: maxBytes },
    headers: { connection: "close" },
  });
}

/** True when the Content-Type is JSON (`application/json`, with or without parameters). */
export function isJsonContentType(header: string | undefined): boolean {
  if (!header) return false;
  const type = header.split(";")[0]?.trim().toLowerCase();
  return type === "application/json" || (type !== undefined && type.startsWith("application/") && type.endsWith("+json"));
}

/**
 * JSON bodies nest at most this deep: tool arguments may nest 64 levels (the call pipeline names that bound), and a JSON-RPC
 * message or a REST body wraps them in a few more. Deeper values would overflow the stack of whatever walks them next.
 */
export const MAX_JSON_DEPTH = 128;

/** Whether JSON text nests deeper than `max`, in one pass that stops there (brackets inside strings do not count). */
function nestingPastLimit(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** Reads a JSON body: 415 for another content type, 413 past the cap, 400 for text that is not JSON or nests past `MAX_JSON_DEPTH` (never a silent `{}`). */
export async function readJson(req: IncomingMessage, maxBytes: number, options: { allowEmpty?: boolean } = {}): Promise<unknown> {
  const type = req.headers["content-type"];
  const declared = req.headers["content-length"];
  const empty = declared === "0" || (declared === undefined && req.headers["transfer-encoding"] === undefined);
  if (empty && options.allowEmpty) return undefined;
  if (!isJsonContentType(type)) {
    throw new HttpError(
      "UNSUPPORTED_MEDIA_TYPE",
      `Send the body as JSON with "Content-Type: application/json" (got ${type ? `"${type.slice(0, 100)}"` : "none"}).`,
    );
  }
  const body = await readBody(req, maxBytes);
  if (body.length === 0) {
    if (options.allowEmpty) return undefined;
    throw new HttpError("INVALID_JSON", "The request body is empty; send a JSON value.");
  }
  const text = body.toString("utf8");
  // Checked on the text, before parsing: a 4 MiB body of brackets costs one pass, never a stack overflow later.
  if (nestingPastLimit(text, MAX_JSON_DEPTH))
    throw new HttpError("BAD_REQUEST", `The request body nests deeper than ${MAX_JSON_DEPTH} levels, the limit; send flatter JSON.`, {
      data: { limit: MAX_JSON_DEPTH },
    });
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new HttpError("INVALID_JSON", `The request body is not valid JSON: ${(error as Error).message.slice(0, 200)}.`);
  }
}
