import { isLegacyRequest } from "@modelcontextprotocol/server";
import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { webRequestOf } from "./bridge";
import { eraAtOnceOn, legacyAtOnce } from "./era";

const CLAIM = "io.modelcontextprotocol/protocolVersion";
const call = (params: unknown, extra: Record<string, unknown> = {}) => ({ jsonrpc: "2.0", id: 7, method: "tools/call", params, ...extra });

/** Bodies as a client may send them: the common call, and each way a body can leave the "2025 request, no claim" case. */
const bodies: unknown[] = [
  call({ name: "m__echo", arguments: { text: "x" } }),
  call({ name: "m__echo", arguments: {}, _meta: { progressToken: 3 } }),
  { jsonrpc: "2.0", id: "a-string-id", method: "tools/list" },
  { jsonrpc: "2.0", id: -1, method: "ping", params: {} },
  call({ _meta: { [CLAIM]: "2026-07-28" } }),
  call({ _meta: { [CLAIM]: "2025-06-18" } }),
  call({ _meta: { [CLAIM]: 5 } }),
  call({ _meta: { [CLAIM]: null, "io.modelcontextprotocol/clientInfo": { name: "x", version: "1" } } }),
  JSON.parse(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"${CLAIM}":"2026-07-28"}}}`),
  JSON.parse(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"__proto__":{"_meta":{"${CLAIM}":"2026-07-28"}}}}`),
  call({ _meta: null }),
  call({ _meta: [CLAIM] }),
  call([{ _meta: { [CLAIM]: "2026-07-28" } }]),
  call(null),
  call("params"),
  call({}, { result: {} }),
  call({}, { error: { code: 1, message: "m" } }),
  { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "c", version: "1" } } },
  { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2026-07-28", _meta: { [CLAIM]: "2026-07-28" } } },
  { jsonrpc: "2.0", method: "notifications/initialized" },
  { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1, _meta: { [CLAIM]: "2026-07-28" } } },
  { jsonrpc: "2.0", id: 1, result: {} },
  { jsonrpc: "2.0", id: 1, error: { code: -1, message: "no" } },
  { jsonrpc: "1.0", id: 1, method: "ping" },
  { jsonrpc: "2.0", id: 1.5, method: "ping" },
  { jsonrpc: "2.0", id: null, method: "ping" },
  { jsonrpc: "2.0", id: true, method: "ping" },
  { jsonrpc: "2.0", id: 1, method: 5 },
  { jsonrpc: "2.0", id: 1, method: "ping", extra: 1 },
  [call({})],
  [],
  {},
  null,
  "text",
  5,
];

/** `MCP-Protocol-Version` as sent: absent, each 2025 version, 2026 and later, whitespace, repeats and junk. */
const versions: Array<string[] | undefined> = [
  undefined,
  ["2025-11-25"],
  ["2025-06-18"],
  ["2025-03-26"],
  ["2024-11-05"],
  ["2024-10-07"],
  ["2024-01-01"],
  ["2026-07-28"],
  ["2027-01-01"],
  [" 2025-06-18\t"],
  ["2025-06-18", "2026-07-28"],
  ["2025-06-18", "2025-06-18"],
  [""],
  ["garbage"],
  ["2025-06-18x"],
];

function requestWith(version: string[] | undefined, view: boolean): Request {
  const raw = ["Host", "127.0.0.1:4000", "Content-Type", "application/json", "Mcp-Method", "tools/call"];
  for (const value of version ?? []) raw.push("MCP-Protocol-Version", value);
  const req = { rawHeaders: raw, headers: { host: "127.0.0.1:4000" }, url: "/mcp", method: "POST" } as unknown as IncomingMessage;
  return webRequestOf(req, undefined, view);
}

describe("legacyAtOnce tells a POST's era only where the SDK's isLegacyRequest says 2025", () => {
  it("never says 2025 where the SDK does not, over every body and header and both header readers", async () => {
    let atOnce = 0;
    for (const view of [true, false]) {
      for (const version of versions) {
        for (const body of bodies) {
          const request = requestWith(version, view);
          if (!legacyAtOnce(request, body, true)) continue;
          atOnce++;
          expect(await isLegacyRequest(request, body), `${JSON.stringify(version)} ${JSON.stringify(body)}`).toBe(true);
        }
      }
    }
    // Not vacuous: the six plain requests (initialize without a claim among them) under no header, each 2025 version or one
    // padded with whitespace (both readers trim it), were told at once, and nothing else.
    expect(atOnce).toBe(2 * 7 * 6);
  });

  it("tells a 2025 session's plain call at once, and nothing when switched off", () => {
    const body = bodies[0];
    expect(legacyAtOnce(requestWith(["2025-06-18"], true), body, true)).toBe(true);
    expect(legacyAtOnce(requestWith(undefined, false), body, true)).toBe(true);
    for (const version of versions) for (const each of bodies) expect(legacyAtOnce(requestWith(version, true), each, false)).toBe(false);
  });

  it("is on unless CODEMUX_ERA_AT_ONCE is 0, false or off", () => {
    expect(eraAtOnceOn({})).toBe(true);
    expect(eraAtOnceOn({ CODEMUX_ERA_AT_ONCE: "1" })).toBe(true);
    for (const off of ["0", "false", "off"]) expect(eraAtOnceOn({ CODEMUX_ERA_AT_ONCE: off })).toBe(false);
  });
});
