import { afterEach, describe, expect, it } from "vitest";
import { REDACTED_META, redactPlugin } from "@codemux/hooks";
import { connect, misbehaving, textOf, type Harness } from "./harness";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const KEY_BLOCK = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\nabc\n-----END RSA PRIVATE KEY-----";

describe("redact", () => {
  it("masks secrets in results before they reach the model", async () => {
    harness = await connect({ servers: { s: misbehaving() }, plugins: [redactPlugin({ patterns: [{ name: "employee-id", regex: /EMP-\d{6}/g }] })] });
    const secret = [
      "github ghp_0123456789abcdefghijABCDEFGHIJ0123456789",
      "aws AKIAIOSFODNN7EXAMPLE",
      "Authorization: Bearer abcdefghijklmnop.qrstuv",
      KEY_BLOCK,
      "password=hunter22",
      "owner EMP-123456",
      "nothing secret here",
    ].join("\n");
    const result = await harness.call("s__echo", { text: secret });
    const text = textOf(result);
    for (const leaked of ["ghp_0123", "AKIAIOSFODNN7EXAMPLE", "abcdefghijklmnop", "MIIEpAIBAAKCAQEA7", "hunter22", "EMP-123456"])
      expect(text).not.toContain(leaked);
    expect(text).toContain("Authorization: Bearer [REDACTED:bearer]");
    expect(text).toContain("password=[REDACTED:secret-assignment]");
    expect(text).toContain("nothing secret here");
    expect(result._meta?.[REDACTED_META]).toBe(6);
  });

  it("leaves clean results untouched", async () => {
    harness = await connect({ servers: { s: misbehaving() }, plugins: [redactPlugin()] });
    const result = await harness.call("s__echo", { text: "just text" });
    expect(result.content).toEqual([{ type: "text", text: "just text" }]);
    expect(result._meta?.[REDACTED_META]).toBeUndefined();
  });
});
