import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TokenSet, parseTokenArg, parseTokenFile } from "../src/tokens";

describe("tokens", () => {
  it("reads name:token lines, comments and JSON", () => {
    expect(parseTokenFile("# team\nlaptop:abcdefgh12345\n\nci : zyxwvuts98765\nbob:abc:def:123456\n")).toEqual([
      { name: "laptop", token: "abcdefgh12345" },
      { name: "ci", token: "zyxwvuts98765" },
      { name: "bob", token: "abc:def:123456" },
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

  it("refuses a line that is not name:token with its number and what was meant, never naming a token after its line or quoting it", () => {
    const refusal = (text: string) => {
      try {
        parseTokenFile(text, "tokens.txt");
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error("the file was accepted");
    };
    expect(refusal("alice:abcdefgh12345\nbob=abcdefgh12345678\n")).toBe(
      "tokens.txt: line 2 is not name:token; did you mean bob:... (a colon between the name and the token)?",
    );
    expect(refusal("# team\n\ncarol abcdefgh12345678")).toBe(
      "tokens.txt: line 3 is not name:token; did you mean carol:... (a colon between the name and the token)?",
    );
    expect(refusal("bare-token-12345678")).toBe(
      "tokens.txt: line 1 has no name: write it as NAME:TOKEN (e.g. laptop:TOKEN); the name is the principal in logs and policies.",
    );
    expect(refusal("dave:")).toBe('tokens.txt: line 1 has the name "dave" but no token after its colon; write dave:TOKEN.');
    expect(refusal("my laptop:abcdefgh12345678")).toBe(
      'tokens.txt: line 1: "my laptop" is not a token name (1-64 letters, digits or _ . @ -); write the line as NAME:TOKEN, e.g. laptop:TOKEN.',
    );
    // A bare base64 token's padding is not read as a separator: its start is not echoed as a name.
    expect(refusal("c2VjcmV0LXRva2VuLXZhbHVl==")).toBe(
      "tokens.txt: line 1 has no name: write it as NAME:TOKEN (e.g. laptop:TOKEN); the name is the principal in logs and policies.",
    );
    for (const text of ["bob=abcdefgh12345678", "bare-token-12345678", "my laptop:abcdefgh12345678"]) expect(refusal(text)).not.toContain("12345678");
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
