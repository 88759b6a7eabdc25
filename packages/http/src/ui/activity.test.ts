import type { CallContext, ToolResult } from "@codemux/core";
import { describe, expect, it } from "vitest";
import { ActivityLog, MAX_ACTIVITY } from "./activity";

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

  it("records a call that threw, with its message, and passes the error on", async () => {
    const log = new ActivityLog();
    await expect(log.middleware()(callOf({}), () => Promise.reject(new Error("server went away")))).rejects.toThrow("server went away");
    expect(log.list()[0]).toMatchObject({ outcome: "error", result: "server went away", principal: "token:alice", origin: "rest" });
  });
});
