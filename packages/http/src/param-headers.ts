import type { IncomingHttpHeaders } from "node:http";

/** `HeaderMismatch` (SEP-2243): a request's headers disagree with its body, or one it must carry is missing. */
export const HEADER_MISMATCH = -32020;

/** How deep `properties` chains are followed for `x-mcp-header`: a bound on what an untrusted schema makes us walk. */
const MAX_DEPTH = 8;
const SENTINEL = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/;
/** What a plain header value may hold (RFC 9110 field value: visible ASCII, space, tab). */
const PLAIN_VALUE = /^[\t\x20-\x7e]*$/;

interface Declaration {
  /** The chain of `properties` keys leading to the annotated parameter. */
  path: string[];
  /** The header is `Mcp-Param-<name>`. */
  name: string;
}

/** The parameters an input schema marks with `x-mcp-header`, reached from its root through `properties` only, as the spec allows. */
function declarationsOf(schema: unknown, path: string[] = []): Declaration[] {
  const properties = (schema as { properties?: unknown } | null)?.properties;
  if (path.length >= MAX_DEPTH || typeof properties !== "object" || properties === null) return [];
  return Object.entries(properties).flatMap(([key, property]) => {
    const name = (property as Record<string, unknown> | null)?.["x-mcp-header"];
    const here = typeof name === "string" && name.length > 0 ? [{ path: [...path, key], name }] : [];
    return [...here, ...declarationsOf(property, [...path, key])];
  });
}

function valueAt(args: unknown, path: string[]): unknown {
  let value = args;
  for (const key of path)
    value = typeof value === "object" && value !== null && Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : undefined;
  return value;
}

/** The header's value as the client meant it (the base64 sentinel decoded), or undefined when it is malformed. */
function decoded(header: string): string | undefined {
  if (header.startsWith("=?base64?") && header.endsWith("?=")) {
    const encoded = SENTINEL.exec(header)?.[1];
    // Padded as base64 must be: a length that is not a multiple of 4 is malformed, as is any other character.
    return encoded === undefined || encoded.length % 4 !== 0 ? undefined : Buffer.from(encoded, "base64").toString("utf8");
  }
  return PLAIN_VALUE.test(header) ? header : undefined;
}

/** Whether a header's (decoded) text says the body's primitive value: integers compare as numbers (`42.0` is 42). */
function agrees(text: string, value: unknown): boolean {
  if (typeof value === "number") return text.trim() !== "" && Number(text) === value;
  return text === String(value);
}

/**
 * Why a `tools/call`'s `Mcp-Param-*` headers do not match its arguments (SEP-2243: each parameter the tool's input schema
 * marks with `x-mcp-header` and the body carries must come as `Mcp-Param-<Name>` with the same value), or undefined when
 * they do. A parameter that is absent or null needs no header; an object or array one is no primitive and not checked.
 */
export function paramHeaderMismatch(inputSchema: unknown, args: unknown, headers: IncomingHttpHeaders): string | undefined {
  for (const { path, name } of declarationsOf(inputSchema)) {
    const value = valueAt(args, path);
    if (value === undefined || value === null || typeof value === "object") continue;
    const header = `Mcp-Param-${name}`;
    const sent = headers[header.toLowerCase()];
    const body = `${path.join(".")}=${JSON.stringify(value).slice(0, 100)}`;
    if (sent === undefined) return `Header mismatch: the body carries ${body} but the ${header} header is absent; send it (SEP-2243).`;
    const text = typeof sent === "string" ? decoded(sent) : undefined;
    if (text === undefined) return `Header mismatch: the ${header} header is malformed: send plain visible ASCII, or =?base64?...?= for anything else.`;
    if (!agrees(text, value)) return `Header mismatch: the ${header} header says ${JSON.stringify(text.slice(0, 100))} but the body carries ${body}.`;
  }
  return undefined;
}
