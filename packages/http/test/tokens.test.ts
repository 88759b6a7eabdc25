import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TokenSet, parseTokenArg, parseTokenFile } from "../src/index";

describe("tokens", () => {
  it("reads name:token lines, bare tokens, comments and JSON", () => {
    expect(parseTokenFile("# team\nlaptop:abcdefgh12345\n\nci:zyxwvuts98765\nbare-token-1234\n")).toEqual([
      { name: "laptop", token: "abcdefgh12345" },
      { name: "ci", token: "zyxwvuts98765" },
      { name: "token5", token: "bare-token-1234" },
    ]);
    expect(parseTokenFile('[{"name":"a","token":"t1t1t1t1t1"}]')).toEqual([{ name: "a", token: "t1t1t1t1t1" }]);
    expect(parseTokenFile('{"a":"t1t1t1t1t1","b":"t2t2t2t2t2"}')).toEqual([
      { name: "a", token: "t1t1t1t1t1" },
      { name: "b", token: "t2t2t2t2t2" },
    ]);
    expect(() => parseTokenFile("[oops")).toThrow(/does not parse/);
    expect(parseTokenArg("secret-without-name")).toEqual({ name: "default", token: "secret-without-name" });
    expect(parseTokenArg("ci:abc:def:123")).toEqual({ name: "ci", token: "abc:def:123" });
  });

  it("verifies by name, refuses the rest, and refuses weak or duplicate tokens at start", () => {
    const set = new TokenSet([
      { name: "alice", token: "alice-token-0123" },
      { name: "bob", token: "bob-token-4567" },
    ]);
    expect(set.verify("alice-token-0123")).toEqual({ name: "alice", principal: "token:alice" });
    expect(set.verify("bob-token-4567")?.principal).toBe("token:bob");
    expect(set.verify("alice-token-012")).toBeUndefined();
    expect(set.verify("")).toBeUndefined();
    expect(set.verify("x".repeat(100_000))).toBeUndefined();
    expect(() => new TokenSet([{ name: "a", token: "short" }])).toThrow(/8 to 4096/);
    expect(
      () =>
        new TokenSet([
          { name: "a", token: "same-token-1" },
          { name: "b", token: "same-token-1" },
        ]),
    ).toThrow(/same as another/);
    expect(
      () =>
        new TokenSet([
          { name: "a", token: "token-one-1" },
          { name: "a", token: "token-two-2" },
        ]),
    ).toThrow(/Two tokens are named "a"/);
    expect(() => new TokenSet([{ name: "bad name", token: "token-one-1" }])).toThrow(/must be 1-64/);
  });

  it("reads groups, scopes and an expiry from JSON entries, and refuses malformed ones naming the entry", () => {
    const file = JSON.stringify([
      { name: "ops", token: "ops-token-0123", groups: ["sre"], scopes: ["admin", "metrics"], expiresAt: "2030-01-01T00:00:00Z" },
      { name: "dev", token: "dev-token-4567" },
    ]);
    const specs = parseTokenFile(file, "tokens.json");
    expect(specs[0]).toEqual({ name: "ops", token: "ops-token-0123", groups: ["sre"], scopes: ["admin", "metrics"], expiresAt: "2030-01-01T00:00:00Z" });
    const set = new TokenSet(specs);
    expect(set.verify("ops-token-0123")).toEqual({
      name: "ops",
      principal: "token:ops",
      groups: ["sre"],
      scopes: ["admin", "metrics"],
      expiresAt: Date.parse("2030-01-01T00:00:00Z"),
    });
    // One token declares scopes, so one without declares none (not every right).
    expect(set.verify("dev-token-4567")?.scopes).toEqual([]);
    // No token declares scopes: none are in force, as before scopes existed.
    expect(new TokenSet([{ name: "dev", token: "dev-token-4567" }]).verify("dev-token-4567")?.scopes).toBeUndefined();
    const readme = readFileSync(join(import.meta.dirname, "../README.md"), "utf8");
    const example = /```json\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf("### The token file")))?.[1] ?? "";
    expect(parseTokenFile(example, "README.md").map(({ token: _, ...rest }) => rest)).toEqual([
      { name: "ops", groups: ["sre"], scopes: ["admin", "metrics"] },
      { name: "prometheus", scopes: ["metrics"] },
      { name: "contractor", expiresAt: "2026-12-31T00:00:00Z" },
    ]);
    const bad = (entry: Record<string, unknown>) => () => parseTokenFile(JSON.stringify([{ name: "a", token: "t1t1t1t1t1", ...entry }]), "tokens.json");
    expect(bad({ expiresAt: "next tuesday" })).toThrow('tokens.json: entry 1: "expiresAt" must be an ISO time such as "2026-12-31T00:00:00Z".');
    expect(bad({ scopes: "admin" })).toThrow(/"scopes" must be a list of at most 64 names/);
    expect(bad({ groups: ["has space"] })).toThrow(/"groups" must be a list/);
    expect(bad({ scope: ["admin"] })).toThrow(/has "scope"; an entry takes name, token, groups, scopes and expiresAt/);
  });
});
