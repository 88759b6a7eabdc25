import { ConfigError } from "@codemux/pool";
import { describe, expect, it } from "vitest";
import { policiesOf } from "./config";

const read = (policies: unknown) => policiesOf({ mcpServers: {}, policies }, "codemux.json");
const refusal = (policies: unknown) => {
  try {
    read(policies);
  } catch (error) {
    expect(ConfigError.isInstance(error)).toBe(true);
    return (error as Error).message;
  }
  throw new Error("the config was accepted");
};

describe("policiesOf", () => {
  it("is undefined without a policies section: everyone sees everything, as before", () => {
    expect(policiesOf({ mcpServers: {} }, "codemux.json")).toBeUndefined();
  });

  it("reads a plain name as a token's principal, as every place that takes a principal does; kinds, local and wildcards stay", () => {
    const rule = read({ rules: [{ principals: ["alice", "token:bob", "oauth:https://idp.example#7", "local", "anonymous", "*", "ci-*"], tools: ["*"] }] })
      ?.rules[0];
    expect(rule?.principals).toEqual(["token:alice", "token:bob", "oauth:https://idp.example#7", "local", "anonymous", "*", "ci-*"]);
  });

  it("reads rules with their defaults: deny for the unmatched, a name from the index, no limits", () => {
    expect(read({ rules: [{ principals: ["token:ci"], tools: ["github__*"] }] })).toEqual({
      default: "deny",
      rules: [{ name: "rules[0]", principals: ["token:ci"], groups: [], scopes: [], tools: ["github__*"], exclude: [], readOnly: false }],
    });
    const full = read({
      default: "allow",
      rules: [
        {
          name: "ops",
          groups: ["ops"],
          scopes: ["tools:admin"],
          tools: ["*"],
          exclude: ["*__delete_*"],
          readOnly: true,
          callsPerMinute: 60,
          concurrentJobs: 2,
        },
      ],
    });
    expect(full?.default).toBe("allow");
    expect(full?.rules[0]).toMatchObject({ name: "ops", readOnly: true, callsPerMinute: 60, concurrentJobs: 2, exclude: ["*__delete_*"] });
  });

  it("names the file and the field of each mistake, with the way to fix it", () => {
    expect(refusal([])).toBe("Invalid config codemux.json: policies: expected an object");
    expect(refusal({ rules: [], defualt: "deny" })).toMatch(/^Invalid config codemux\.json: policies\.defualt: unknown setting \(did you mean "default"\?\)/);
    expect(refusal({ default: "maybe", rules: [] })).toMatch(/policies\.default: expected "deny" or "allow"/);
    expect(refusal({})).toMatch(/policies\.rules: expected a list of rules/);
    expect(refusal({ rules: [{ tools: ["*"] }] })).toMatch(/policies\.rules\[0\]: names nobody: give it "principals"/);
    expect(refusal({ rules: [{ principals: ["token:a"] }] })).toMatch(/policies\.rules\[0\]\.tools: is required/);
    expect(refusal({ rules: [{ principals: "token:a", tools: ["*"] }] })).toMatch(/policies\.rules\[0\]\.principals: expected a list of non-empty strings/);
    expect(refusal({ rules: [{ principals: ["token:a"], tools: ["*"], readOnly: "yes" }] })).toMatch(/rules\[0\]\.readOnly: expected true or false/);
    expect(refusal({ rules: [{ principals: ["token:a"], tools: ["*"], callsPerMinute: 0 }] })).toMatch(
      /rules\[0\]\.callsPerMinute: expected a whole number of at least 1/,
    );
    expect(refusal({ rules: [{ principals: ["token:a"], tools: ["*"], toolz: [] }] })).toMatch(/rules\[0\]\.toolz: unknown setting \(did you mean "tools"\?\)/);
    expect(
      refusal({
        rules: [
          { name: "a", principals: ["token:a"], tools: ["*"] },
          { name: "a", principals: ["token:b"], tools: ["*"] },
        ],
      }),
    ).toMatch(/rules\[1\]\.name: "a" names two rules/);
    expect(refusal({ rules: [{ name: "local", principals: ["token:a"], tools: ["*"] }] })).toMatch(/rules\[0\]\.name: "local" is reserved/);
  });
});
