import type { CallContext, SecretMask, ToolResult } from "@codemux/core";
import { describe, expect, it } from "vitest";
import { ActivityLog, MAX_ACTIVITY, activityLazyByDefault, boundedCopy } from "./activity";

/** A call as the pipeline hands it to middleware: the fields the log reads. */
function callOf(args: Record<string, unknown>, tool = "m__echo", principal = "token:alice"): CallContext {
  return { entry: { qualifiedName: tool }, arguments: args, origin: "rest", session: { id: "s1", principal } } as unknown as CallContext;
}

const answer = (text: string): Promise<ToolResult> => Promise.resolve({ content: [{ type: "text", text }] });

describe("ActivityLog", () => {
  it("keeps the newest calls only, up to its bound", async () => {
    const log = new ActivityLog();
    const record = log.middleware();
    for (let i = 0; i < MAX_ACTIVITY + 5; i++) await record(callOf({ i }), () => answer(String(i)));
    const kept = log.list();
    expect(kept).toHaveLength(MAX_ACTIVITY);
    expect(JSON.parse(kept[0]?.arguments as string)).toEqual({ i: MAX_ACTIVITY + 4 });
    expect(JSON.parse(kept.at(-1)?.arguments as string)).toEqual({ i: 5 });
  });

  it("masks secret-named keys at any depth and cuts what it keeps of a large result", async () => {
    const log = new ActivityLog();
    await log.middleware()(callOf({ query: "x", options: { apiKey: "k-123456", nested: [{ password: "p" }] } }), () => answer("y".repeat(40_000)));
    const [entry] = log.list();
    expect(JSON.parse(entry?.arguments as string)).toEqual({ query: "x", options: { apiKey: "***", nested: [{ password: "***" }] } });
    expect(entry?.result.length).toBeLessThan(17 * 1024);
    expect(entry?.result).toMatch(/more characters not kept\)$/);
    expect(entry?.bytes).toBeGreaterThan(40_000);
  });

  it("forgets one principal's calls, with their arguments and results, and keeps the others'", async () => {
    const log = new ActivityLog();
    const record = log.middleware();
    await record(callOf({ note: "alice-1" }), () => answer("alice's answer"));
    await record(callOf({ note: "bob-1" }, "m__echo", "token:bob"), () => answer("bob's answer"));
    await record(callOf({ note: "alice-2" }), () => answer("alice's answer"));
    expect(log.forget("token:alice")).toBe(2);
    expect(log.list().map((entry) => entry.principal)).toEqual(["token:bob"]);
    expect(JSON.stringify(log.list())).not.toContain("alice");
    expect(log.forget("token:alice")).toBe(0);
  });

  it("keeps newest-first order, lookups and forgetting right once the ring has wrapped", async () => {
    const log = new ActivityLog();
    const record = log.middleware();
    const principal = (i: number) => (i % 3 === 0 ? "token:bob" : "token:alice");
    for (let i = 0; i < MAX_ACTIVITY + 7; i++) await record(callOf({ i }, "m__echo", principal(i)), () => answer(String(i)));
    const ids = log.list().map((entry) => entry.id);
    expect(ids).toEqual(Array.from({ length: MAX_ACTIVITY }, (_, k) => MAX_ACTIVITY + 7 - k));
    expect(log.get(8)?.result).toContain('"7"');
    expect(log.get(7)).toBeUndefined();
    const bobs = log.list((entry) => entry.principal === "token:bob").map((entry) => entry.id);
    expect(log.forget("token:alice")).toBe(MAX_ACTIVITY - bobs.length);
    expect(log.list().map((entry) => entry.id)).toEqual(bobs);
    await record(callOf({ i: "after" }), () => answer("after"));
    expect(log.list().map((entry) => entry.id)).toEqual([MAX_ACTIVITY + 8, ...bobs]);
  });

  it("reads the same as JSON as through its fields, time included", async () => {
    const log = new ActivityLog(() => Date.UTC(2026, 11, 7, 8, 30));
    await log.middleware()(callOf({ q: "x", token: "t-1" }), () => answer("y"));
    const [entry] = log.list();
    expect(JSON.parse(JSON.stringify(entry))).toEqual({
      id: 1,
      time: "2026-12-07T08:30:00.000Z",
      principal: "token:alice",
      tool: "m__echo",
      origin: "rest",
      durationMs: 0,
      outcome: "ok",
      bytes: entry?.bytes,
      arguments: '{"q":"x","token":"***"}',
      result: '{"content":[{"type":"text","text":"y"}]}',
    });
  });

  it("records a call that threw, with its message, and passes the error on", async () => {
    const log = new ActivityLog();
    await expect(log.middleware()(callOf({}), () => Promise.reject(new Error("server went away")))).rejects.toThrow("server went away");
    expect(log.list()[0]).toMatchObject({ outcome: "error", result: "server went away", principal: "token:alice", origin: "rest" });
  });
});

/** The fields of a call the log reads. */
const call = (args: Record<string, unknown>, principal = "token:alice") =>
  ({ session: { principal }, entry: { qualifiedName: "m__echo" }, origin: "mcp", arguments: args }) as unknown as CallContext;

/** A mask that counts the text it is given: the regexes' work. */
function countingMask(): SecretMask & { texts: number } {
  const mask = {
    texts: 0,
    text: (text: string) => {
      mask.texts++;
      return text.replaceAll("hunter2-secret", "[REDACTED:custom]");
    },
    value: <T>(value: T) => value,
  };
  return mask;
}

async function record(log: ActivityLog, args: Record<string, unknown>, result: ToolResult): Promise<void> {
  await log.middleware()(call(args), async () => result);
}

const secrets = {
  args: { text: "hello", password: "p4ssw0rd-value", nested: { apiKey: "abc" } },
  result: {
    content: [{ type: "text", text: "token ghp_0123456789abcdefghijklmnopqrstuvwxyz01 and hunter2-secret, Bearer abc.def.ghi" }],
  } as ToolResult,
};

describe("ActivityLog: lazy entries (CODEMUX_ACTIVITY_LAZY)", () => {
  it("masks and stringifies an entry only when it is read, and reads as the eager log does", async () => {
    const mask = countingMask();
    const lazy = new ActivityLog(Date.now, mask, true);
    const eager = new ActivityLog(Date.now, countingMask(), false);
    await record(lazy, secrets.args, secrets.result);
    await record(eager, secrets.args, secrets.result);
    expect(mask.texts).toBe(0);
    const [a] = lazy.list();
    const [b] = eager.list();
    expect(a?.arguments).toBe(b?.arguments);
    expect(a?.result).toBe(b?.result);
    expect(a?.bytes).toBe(b?.bytes);
    expect(mask.texts).toBe(2);
    // Masked before anything leaves: secret-named keys, secret-shaped text, the redact plugin's patterns.
    expect(a?.arguments).not.toContain("p4ssw0rd-value");
    expect(a?.arguments).not.toMatch(/"abc"/);
    expect(a?.result).not.toContain("ghp_0123456789");
    expect(a?.result).not.toContain("hunter2-secret");
    expect(a?.result).not.toContain("abc.def.ghi");
    // Read again: the text made once.
    void a?.result;
    expect(mask.texts).toBe(2);
  });

  it("keeps a bounded copy of a large result, masked as far as it is kept and cut where the eager log cuts", async () => {
    const big = `hunter2-secret ${"x".repeat(40_000)} hunter2-secret`;
    const result = { content: [{ type: "text", text: big }] } as ToolResult;
    const lazy = new ActivityLog(Date.now, countingMask(), true);
    const eager = new ActivityLog(Date.now, countingMask(), false);
    await record(lazy, { text: "x" }, result);
    await record(eager, { text: "x" }, result);
    const [a] = lazy.list();
    const [b] = eager.list();
    expect(a?.result.split("…")[0]).toBe(b?.result.split("…")[0]);
    expect(a?.result).toContain("[REDACTED:custom]");
    expect(a?.result).not.toContain("hunter2-secret");
    expect(a?.result).toMatch(/more characters not kept\)$/);
    expect(a?.bytes).toBe(b?.bytes);
    // The copy is bounded: no more than the kept characters of the 40 KB string.
    const kept = boundedCopy(result).value as { content: Array<{ text: string }> };
    expect(kept.content[0]?.text.length).toBeLessThanOrEqual(16 * 1024 + 1);
  });

  it("a copy's JSON begins as the original's: many items, nesting, numbers, and a cut past the kept length", () => {
    const value = { items: Array.from({ length: 5_000 }, (_, i) => ({ n: i, s: `item ${i}`, deep: [[{ ok: true, none: null }]] })) };
    const copy = boundedCopy(value);
    const original = JSON.stringify(value);
    const kept = JSON.stringify(copy.value);
    expect(kept.length).toBeLessThan(original.length);
    expect(kept.slice(0, 16 * 1024)).toBe(original.slice(0, 16 * 1024));
    expect(copy.chars).toBe(original.length);
    expect(copy.bytes).toBe(Buffer.byteLength(original));
  });

  it("CODEMUX_ACTIVITY_LAZY=0, false or off turns the lazy entries off", () => {
    for (const value of ["0", "false", "off", "OFF"]) expect(activityLazyByDefault({ CODEMUX_ACTIVITY_LAZY: value })).toBe(false);
    expect(activityLazyByDefault({})).toBe(true);
    expect(activityLazyByDefault({ CODEMUX_ACTIVITY_LAZY: "1" })).toBe(true);
  });
});
