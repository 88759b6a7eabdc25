import { DownstreamError, PoolError } from "@codemux/pool";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { Redactor } from "../redactor";
import { redactError, redactResult } from "./redact";

describe("redact", () => {
  it("withholds text past its scan bound rather than pass it unscanned", () => {
    const redactor = new Redactor({ maxScanChars: 100 });
    const { text } = redactor.text(`${"a".repeat(100)}AKIAIOSFODNN7EXAMPLE`);
    expect(text).not.toContain("AKIA");
    expect(text).toContain("not scanned for secrets and are withheld");
  });

  it("scans a large hostile text in bounded time (no catastrophic backtracking in built-ins)", () => {
    const redactor = new Redactor();
    const hostile = `-----BEGIN RSA PRIVATE KEY-----${"A".repeat(200_000)} Bearer ${"a".repeat(100_000)} eyJ${"a".repeat(50_000)}.eyJ password= ${"x".repeat(100_000)}`;
    const { text } = redactor.text(hostile);
    expect(text.length).toBeGreaterThan(0);
  });

  it("masks string values of structuredContent", () => {
    const redactor = new Redactor();
    const masked = redactor.value({ nested: { key: "AKIAIOSFODNN7EXAMPLE", n: 3 } });
    expect(masked).toEqual({ value: { nested: { key: "[REDACTED:aws-access-key]", n: 3 } }, count: 1 });
  });

  it("masks a secret split across text parts, in each part it touches, whichever way they are joined", () => {
    const redactor = new Redactor({ patterns: [{ name: "corp-id", regex: /CORP-\d{6}/g }] });
    const token = "ghp_0123456789abcdefghijABCDEFGHIJ0123456789";
    const { texts, count } = redactor.texts([`clean, then ${token.slice(0, 10)}`, `${token.slice(10)} and CORP-`, "123456 end", "password=", "hunter22"]);
    expect(texts).toEqual([
      "clean, then [REDACTED:github-token]",
      "[REDACTED:github-token] and [REDACTED:corp-id]",
      "[REDACTED:corp-id] end",
      "password=",
      "[REDACTED:secret-assignment]",
    ]);
    expect(count).toBe(3);
    for (const join of ["", "\n", " "]) expect(texts.join(join)).not.toMatch(/0123456789abcdef|CORP-\d|hunter22/);
    expect(redactor.texts(["nothing", "here"])).toEqual({ texts: ["nothing", "here"], count: 0 });
  });

  it("masks keys of structured values too, keeping a __proto__ key as data and two masked keys apart", () => {
    const redactor = new Redactor();
    const value = JSON.parse('{"AKIAIOSFODNN7EXAMPLE":1,"AKIAIOSFODNN7EXAMPLF":2,"__proto__":{"polluted":true},"plain":"x"}');
    const masked = redactor.value(value);
    expect(masked.value).toEqual({ "[REDACTED:aws-access-key]": 1, "[REDACTED:aws-access-key]#2": 2, ["__proto__"]: { polluted: true }, plain: "x" });
    expect(Object.getPrototypeOf(masked.value)).toBe(Object.prototype);
    expect(masked.count).toBe(2);
  });

  it("masks every part type but media data: resource links, embedded text, text-typed blobs, _meta", () => {
    const secret = "AKIAIOSFODNN7EXAMPLE";
    const blob = (text: string) => Buffer.from(text).toString("base64");
    const result = {
      content: [
        { type: "resource_link", uri: `https://x.dev/${secret}`, name: secret, description: `the key ${secret}` },
        { type: "resource", resource: { uri: "r://a", mimeType: "text/plain", text: `key ${secret}` } },
        { type: "resource", resource: { uri: "r://b", mimeType: "application/json", blob: blob(`{"key":"${secret}"}`) } },
        { type: "image", data: blob(secret), mimeType: "image/png" },
      ],
      _meta: { note: secret },
    } as CallToolResult;
    const { result: masked, count } = redactResult(new Redactor(), result);
    expect(count).toBe(6);
    const [link, embedded, typed, image] = masked.content as Array<Record<string, unknown>>;
    expect(link).toEqual({
      type: "resource_link",
      uri: "https://x.dev/[REDACTED:aws-access-key]",
      name: "[REDACTED:aws-access-key]",
      description: "the key [REDACTED:aws-access-key]",
    });
    expect(embedded).toMatchObject({ resource: { text: "key [REDACTED:aws-access-key]" } });
    expect(Buffer.from(String((typed?.resource as { blob: string }).blob), "base64").toString()).toBe('{"key":"[REDACTED:aws-access-key]"}');
    expect(image).toEqual(result.content[3]);
    expect(masked._meta).toEqual({ note: "[REDACTED:aws-access-key]" });
  });

  it("masks a failed call's message in a copy of the same class and code, without the unmasked cause", () => {
    const redactor = new Redactor({ patterns: [{ name: "corp-id", regex: /CORP-\d{6}/g }] });
    const cause = new Error("MCP error -32603: no ledger for CORP-123456");
    const error = new DownstreamError("s", "t", "no ledger for CORP-123456", -32603, { cause });
    const masked = redactError(redactor, error);
    expect(masked?.count).toBe(1);
    expect(masked?.error).toBeInstanceOf(DownstreamError);
    expect(PoolError.isInstance(masked?.error)).toBe(true);
    expect(masked?.error).toMatchObject({ code: "DOWNSTREAM_ERROR", server: "s", tool: "t", message: "s__t failed: no ledger for [REDACTED:corp-id]" });
    expect(masked?.error.cause).toBeUndefined();
    expect(masked?.error.stack).not.toContain("CORP-123456");
    expect(redactError(redactor, new Error("nothing secret"))).toBeUndefined();
  });
});
