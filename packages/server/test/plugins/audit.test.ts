import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { auditPlugin, cachePlugin, guardPlugin, redactPlugin, type AuditLine } from "@codemux/hooks";
import { connect, misbehaving, tempDir, type Harness } from "./harness";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const linesOf = (file: string): AuditLine[] =>
  readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as AuditLine);

describe("audit", () => {
  it("writes one JSON line per call with who, where from, what, how long, how it ended and how big", async () => {
    const dir = tempDir();
    const audit = auditPlugin({ file: join(dir, "audit.jsonl") });
    harness = await connect({ servers: { s: misbehaving() }, plugins: [audit, cachePlugin({ tools: ["s__echo"] }), guardPlugin({ deny: ["s__crash"] })] });
    await harness.call("s__echo", { text: "hello" });
    await harness.call("s__echo", { text: "hello" });
    await harness.call("s__fail", { message: "bad" });
    await harness.call("s__throw", { message: "boom" });
    await harness.call("s__crash", {});
    await audit.flush();
    const lines = linesOf(join(dir, "audit.jsonl"));
    expect(lines.map((l) => [l.tool, l.outcome, l.by])).toEqual([
      ["echo", "ok", undefined],
      ["echo", "short_circuit", "cache"],
      ["fail", "tool_error", undefined],
      ["throw", "error", undefined],
      ["crash", "refused", "guard"],
    ]);
    const first = lines[0]!;
    expect(first).toMatchObject({ principal: "local", origin: "passthrough", server: "s", resultBytes: 5 });
    expect(first.argsDigest).toMatch(/^[0-9a-f]{16}$/);
    expect(lines[1]!.argsDigest).toBe(first.argsDigest);
    expect(first.arguments).toBeUndefined();
    expect(Number.isNaN(Date.parse(first.time))).toBe(false);
    expect(typeof first.durationMs).toBe("number");
    expect(lines[3]!.error).toContain("boom");
  });

  it("writes the arguments when asked, with secrets masked by key and by pattern (the redact plugin's own patterns)", async () => {
    const dir = tempDir();
    const audit = auditPlugin({
      file: join(dir, "audit.jsonl"),
      includeArguments: true,
      redactor: redactPlugin({ patterns: [{ name: "ticket", regex: /TICKET-\d+/g }] }).redactor,
    });
    harness = await connect({ servers: { s: misbehaving() }, plugins: [audit] });
    await harness.call("s__echo", { text: "token ghp_0123456789abcdefghijABCDEFGHIJ0123456789 for TICKET-42" });
    await harness.call("s__env", { name: "PATH", apiKey: "plain-looking" } as never);
    await audit.flush();
    const [echo, env] = linesOf(join(dir, "audit.jsonl"));
    expect(echo!.arguments).toEqual({ text: "token [REDACTED:github-token] for [REDACTED:ticket]" });
    expect(JSON.stringify(env!.arguments)).not.toContain("plain-looking");
  });

  it("rotates by size and keeps the configured number of files", async () => {
    const dir = tempDir();
    const audit = auditPlugin({ file: join(dir, "audit.jsonl"), maxBytes: 1024, files: 3 });
    harness = await connect({ servers: { s: misbehaving() }, plugins: [audit] });
    for (let i = 0; i < 30; i++) await harness.call("s__echo", { text: `call ${i}` });
    await audit.flush();
    expect(readdirSync(dir).sort()).toEqual(["audit.1.jsonl", "audit.2.jsonl", "audit.jsonl"]);
    for (const file of readdirSync(dir)) {
      const text = readFileSync(join(dir, file), "utf8");
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(1024);
      for (const line of text.trim().split("\n")) expect(() => JSON.parse(line)).not.toThrow();
    }
    const newest = linesOf(join(dir, "audit.jsonl"));
    expect(newest.at(-1)!.argsDigest).toBeDefined();
  });

  it("defaults to audit/audit.jsonl under the data dir", async () => {
    const audit = auditPlugin();
    harness = await connect({ servers: { s: misbehaving() }, plugins: [audit] });
    await harness.call("s__echo", { text: "x" });
    await audit.flush();
    expect(audit.file).toBe(join(harness.dataDir, "audit", "audit.jsonl"));
    expect(linesOf(audit.file!)).toHaveLength(1);
  });
});

describe("audit retention and forgetting a principal", () => {
  const line = (principal: string, time: number, tool = "echo") => JSON.stringify({ time: new Date(time).toISOString(), principal, tool, outcome: "ok" });

  it("removes a principal's lines from every kept file while calls go on writing, and only that principal's", async () => {
    const dir = tempDir();
    const now = Date.now();
    writeFileSync(join(dir, "audit.1.jsonl"), `${line("token:alice", now - 2)}\n${line("token:bob", now - 2)}\n`);
    writeFileSync(join(dir, "audit.jsonl"), `${line("token:alice", now - 1)}\n${line("token:bob", now - 1)}\nnot json\n`);
    const audit = auditPlugin({ file: join(dir, "audit.jsonl"), files: 3 });
    harness = await connect({ servers: { s: misbehaving() }, plugins: [audit] });
    const [forgotten] = await Promise.all([audit.forget!("token:alice"), harness.call("s__echo", { text: "during" })]);
    await audit.flush();
    expect(forgotten).toBe(2);
    const all = [...linesOfText(join(dir, "audit.1.jsonl")), ...linesOfText(join(dir, "audit.jsonl"))];
    expect(all.some((l) => l.includes("token:alice"))).toBe(false);
    expect(all.filter((l) => l.includes("token:bob"))).toHaveLength(2);
    // The call made while the files were rewritten is there, and a line that is not JSON is nobody's to remove.
    expect(all.filter((l) => l.includes('"principal":"local"'))).toHaveLength(1);
    expect(all).toContain("not json");
  });

  it("removes lines older than their principal's retention, at start and when asked", async () => {
    const dir = tempDir();
    const now = Date.now();
    const hour = 3_600_000;
    writeFileSync(
      join(dir, "audit.jsonl"),
      [line("token:ci", now - 3 * hour), line("token:ci", now - 10), line("token:alice", now - 3 * hour), line("local", now - 100 * hour)].join("\n"),
    );
    const audit = auditPlugin({ file: join(dir, "audit.jsonl") });
    const retentionMs = (_kind: "audit", principal: string) => (principal === "token:ci" ? hour : principal === "token:alice" ? 24 * hour : undefined);
    harness = await connect({ servers: { s: misbehaving() }, plugins: [audit], host: { retentionMs } });
    await audit.prune();
    const kept = linesOfText(join(dir, "audit.jsonl")).map((l) => JSON.parse(l) as { principal: string; time: string });
    expect(kept.map((l) => l.principal)).toEqual(["token:ci", "token:alice", "local"]);
    expect(Date.parse(kept[0]!.time)).toBe(now - 10);
  });
});

function linesOfText(file: string): string[] {
  return readFileSync(file, "utf8").split("\n").filter(Boolean);
}
