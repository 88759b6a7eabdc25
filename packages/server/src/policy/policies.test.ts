import { describe, expect, it } from "vitest";
import { policiesOf } from "./config";
import { explainPolicy } from "./explain";
import { Policies } from "./policies";

const config = policiesOf(
  {
    policies: {
      rules: [
        { name: "ci", principals: ["token:ci-*"], tools: ["github__get_*", "fs"], exclude: ["fs__write_*"], callsPerMinute: 30 },
        { name: "ops", groups: ["ops"], tools: ["*"], readOnly: true, concurrentJobs: 2 },
        { name: "scoped", scopes: ["tools:memory"], tools: ["memory__*"] },
        { name: "owner", principals: ["local"], tools: ["fs__read_*"] },
      ],
    },
  },
  "codemux.json",
);
if (!config) throw new Error("the test config has policies");
const policies = new Policies(config);

describe("Policies.grant", () => {
  it("takes the first rule that matches the principal id by glob, then by group, then by scope", () => {
    const ci = policies.grant({ principal: "token:ci-nightly", groups: ["ops"] });
    expect(ci.rule).toBe("ci");
    expect(ci.because).toBe('its principal "token:ci-nightly" matches "token:ci-*"');
    expect(policies.grant({ principal: "oauth:https://idp#42", groups: ["dev", "ops"] })).toMatchObject({ rule: "ops", readOnly: true, concurrentJobs: 2 });
    expect(policies.grant({ principal: "oauth:https://idp#42", scopes: ["tools:memory"] }).rule).toBe("scoped");
    // A glob over principals never reaches another kind: "token:ci-*" is not an OAuth subject named ci-x.
    expect(policies.grant({ principal: "oauth:ci-x" }).rule).toBe("default");
  });

  it("shows tools by glob (a bare name is a whole server), hides what exclude names, and shows whole servers only by such globs", () => {
    const ci = policies.grant({ principal: "token:ci-1" });
    expect(ci.sees("github__get_issue")).toBe(true);
    expect(ci.sees("github__create_issue")).toBe(false);
    expect(ci.sees("fs__read_text_file")).toBe(true);
    expect(ci.sees("fs__write_file")).toBe(false);
    expect(ci.sees("fsx__read")).toBe(false);
    expect(ci.seesServer("fs")).toBe(true);
    expect(ci.seesServer("github")).toBe(false);
    expect(ci.callsPerMinute).toBe(30);
  });

  it("denies a principal no rule matches unless the default is allow", () => {
    const denied = policies.grant({ principal: "token:stranger" });
    expect(denied).toMatchObject({ rule: "default", all: false });
    expect(denied.sees("fs__read_text_file")).toBe(false);
    expect(denied.seesServer("fs")).toBe(false);
    const open = new Policies({ ...config, default: "allow" }).grant({ principal: "token:stranger" });
    expect(open).toMatchObject({ rule: "default", all: true });
    expect(open.sees("anything__at_all")).toBe(true);
  });

  it("leaves the stdio owner unrestricted unless a rule names local itself (a * glob does not)", () => {
    const everyone = new Policies({ default: "deny", rules: [{ ...config.rules[1]!, groups: [], principals: ["*"] }] });
    expect(everyone.grant({ principal: "local" })).toMatchObject({ rule: "local", all: true });
    expect(everyone.grant({ principal: "anonymous" }).rule).toBe("ops");
    const owner = policies.grant({ principal: "local" });
    expect(owner.rule).toBe("owner");
    expect(owner.sees("fs__read_text_file")).toBe(true);
    expect(owner.sees("fs__write_file")).toBe(false);
  });
});

describe("explainPolicy", () => {
  it("says which rule decides and why, whether the tool is seen, and the limits", () => {
    expect(explainPolicy(config, { principal: "token:ci-1" }, "fs__write_file")).toMatchObject({
      rule: "ci",
      visible: false,
      text: 'Rule "ci" decides for "token:ci-1": its principal "token:ci-1" matches "token:ci-*".\nfs__write_file is hidden: the rule\'s exclude "fs__write_*" matches it. It answers as an unknown tool.\nCalls per minute: 30 for this principal, from every surface together.',
    });
    expect(explainPolicy(config, { principal: "token:x", groups: ["ops"] }, "github__delete_repo").text).toContain(
      'github__delete_repo is seen (the rule\'s tools "*" match it).\nIt may be called only if its server marks it read-only',
    );
    expect(explainPolicy(config, { principal: "token:x" }, "fs__read_text_file").text).toContain("is hidden: the default shows no tool");
    expect(explainPolicy(undefined, { principal: "token:x" }, "fs__read_text_file")).toMatchObject({ rule: undefined, visible: true });
  });

  it("with what the catalog says, decides a read-only rule by the tool's annotations and says when the tool does not exist", () => {
    const ops = { principal: "token:x", groups: ["ops"] };
    const found = (readOnlyHint: boolean) => ({ state: "found" as const, annotations: { readOnlyHint } });
    expect(explainPolicy(config, ops, { name: "fs__read_text_file", catalog: found(true) })).toMatchObject({ callable: true });
    expect(explainPolicy(config, ops, { name: "fs__read_text_file", catalog: found(true) }).text).toContain(
      "It may be called: its server marks it read-only (readOnlyHint: true)",
    );
    const writer = explainPolicy(config, ops, { name: "fs__write_file", catalog: found(false) });
    expect(writer).toMatchObject({ visible: true, callable: false });
    expect(writer.text).toContain("It may not be called: its server does not mark it read-only");
    const missing = explainPolicy(config, ops, { name: "fs__nope", catalog: { state: "missing", why: 'No tool named "fs__nope".' } });
    expect(missing).toMatchObject({ visible: true, callable: false });
    expect(missing.text).toContain('fs__nope would be seen (the rule\'s tools "*" match it), but it is not in the catalog: No tool named "fs__nope".');
    expect(missing.text).not.toContain("may be called");
    const down = explainPolicy(config, ops, { name: "fs__x", catalog: { state: "unknown", why: 'Server "fs" is unavailable: it failed.' } });
    expect(down.callable).toBeUndefined();
    expect(down.text).toContain('Whether fs__x exists is not known: Server "fs" is unavailable: it failed.');
    expect(explainPolicy(undefined, { principal: "token:x" }, { name: "fs__nope", catalog: { state: "missing", why: "gone." } })).toMatchObject({
      visible: true,
      callable: false,
    });
  });
});
