/** Parameters worth naming in a progress line, in this order (as seed 001 does). */
const KEY_PARAMS = ["path", "url", "query", "prompt", "name", "id"];
/** A named value is cut to this many characters in a progress line (seed 001's limit). */
const MAX_VALUE_CHARS = 80;
/** Only the start of a text can show on one line: no more than this is scanned. */
const MAX_SCANNED_CHARS = 64 * 1024;

/** Text on one line (whitespace runs as one space), cut to `max` characters with an ellipsis. */
export function oneLine(text: string, max: number): string {
  const line = text.slice(0, MAX_SCANNED_CHARS).replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/**
 * Seed 001's progress line for a tool call: the tool and up to three telling parameters, each cut to
 * 80 characters. `mask` sees each whole value before the cut, which could leave a secret too short to recognise.
 */
export function callLine(tool: string, args: unknown, mask: (text: string) => string = (text) => text): string {
  if (typeof args !== "object" || args === null) return tool;
  const record = args as Record<string, unknown>;
  const parts: string[] = [];
  for (const key of KEY_PARAMS) {
    const value = Object.hasOwn(record, key) ? record[key] : undefined;
    if (value === undefined || value === null || typeof value === "object") continue;
    parts.push(`${key}=${oneLine(mask(String(value).slice(0, MAX_SCANNED_CHARS)), MAX_VALUE_CHARS)}`);
    if (parts.length === 3) break;
  }
  return parts.length ? `${tool} ${parts.join(" ")}` : tool;
}
