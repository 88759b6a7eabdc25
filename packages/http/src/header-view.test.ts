import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { webRequestOf } from "./bridge";
import { headerViewOn, RawHeaderView, rawHeaders } from "./header-view";

/** Raw header lists as Node gives them (names as sent, in order), with repeats, cases and whitespace. */
const lists: string[][] = [
  ["Host", "127.0.0.1:4000", "Content-Type", "application/json", "Accept", "application/json, text/event-stream", "Mcp-Session-Id", "abc"],
  ["content-type", "application/json", "Content-Type", "text/plain", "X-Empty", "", "x-empty", "later", "Set-Cookie", "a=1", "set-cookie", "b=2"],
  ["mcp-protocol-version", " 2025-06-18\t", "Authorization", "Bearer t", "X-Inner", "a  b", "accept", "*/*"],
  ["X-Long", ` a${" ".repeat(5_000)}b\t`, "x-long", "  "],
  [],
];
const names = [
  "host",
  "HOST",
  "content-type",
  "Content-Type",
  "accept",
  "mcp-session-id",
  "MCP-SESSION-ID",
  "x-empty",
  "set-cookie",
  "mcp-protocol-version",
  "authorization",
  "x-inner",
  "absent",
];

describe("RawHeaderView reads a request's headers as undici's Headers does", () => {
  it.each(lists.map((list) => [list.length / 2, list]))("%i headers: get, has, iteration and set-cookie agree", (_count, list) => {
    const view = new RawHeaderView(list);
    const real = rawHeaders(list);
    for (const name of names) {
      expect(view.get(name), name).toBe(real.get(name));
      expect(view.has(name), name).toBe(real.has(name));
    }
    expect([...view]).toEqual([...real]);
    expect(view.getSetCookie()).toEqual(real.getSetCookie());
  });

  it("reads what was changed after a change, as Headers does", () => {
    const list = lists[0] as string[];
    const view = new RawHeaderView(list);
    const real = rawHeaders(list);
    for (const headers of [view, real]) {
      headers.set("Accept", "text/html");
      headers.append("x-new", "1");
      headers.delete("mcp-session-id");
    }
    for (const name of [...names, "x-new"]) expect(view.get(name), name).toBe(real.get(name));
  });

  it("is the request head's headers unless CODEMUX_HEADER_VIEW is 0, false or off", () => {
    const req = { rawHeaders: lists[0], headers: { host: "127.0.0.1:4000" }, url: "/mcp", method: "post" } as unknown as IncomingMessage;
    expect(webRequestOf(req, undefined, true).headers).toBeInstanceOf(RawHeaderView);
    const plain = webRequestOf(req, undefined, false);
    expect(plain.headers).toBeInstanceOf(Headers);
    expect(plain.headers.get("mcp-session-id")).toBe("abc");
    for (const off of ["0", "false", "off"]) expect(headerViewOn({ CODEMUX_HEADER_VIEW: off })).toBe(false);
    expect(headerViewOn({})).toBe(true);
  });
});
