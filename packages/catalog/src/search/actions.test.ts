import { describe, expect, it } from "vitest";
import { leadingVerbs, verbKind, verbsOf } from "./actions";
import { tokenize } from "./tokenize";

describe("verbKind", () => {
  it("groups verbs by the change they make", () => {
    expect(verbKind(tokenize("list")[0]!)).toBe(verbKind(tokenize("get")[0]!));
    expect(verbKind(tokenize("remove")[0]!)).toBe(verbKind(tokenize("drop")[0]!));
    expect(verbKind(tokenize("list")[0]!)).not.toBe(verbKind(tokenize("delete")[0]!));
    // "leave a comment" adds one.
    expect(verbKind(tokenize("leave")[0]!)).toBe(verbKind(tokenize("create")[0]!));
    // an issue is marked or resolved by changing it; a trace or a video starts when recorded.
    expect(verbKind(tokenize("mark")[0]!)).toBe(verbKind(tokenize("update")[0]!));
    expect(verbKind(tokenize("resolve")[0]!)).toBe(verbKind(tokenize("update")[0]!));
    expect(verbKind(tokenize("record")[0]!)).toBe(verbKind(tokenize("start")[0]!));
    expect(verbKind(tokenize("forget")[0]!)).toBe(verbKind(tokenize("delete")[0]!));
    expect(verbKind(tokenize("run")[0]!)).toBeUndefined();
    expect(verbKind(tokenize("pods")[0]!)).toBeUndefined();
  });
});

describe("verbsOf and leadingVerbs", () => {
  it("skips a verb that opens a noun phrase", () => {
    expect(verbsOf(tokenize("get_pull_request"))).toEqual(tokenize("get"));
    expect(verbsOf(tokenize("git_pull"))).toEqual(tokenize("pull"));
  });

  it("takes the verbs a sentence opens with", () => {
    expect(leadingVerbs(tokenize("Get or list Kubernetes resources"))).toEqual(tokenize("get list"));
    expect(leadingVerbs(tokenize("Update a pull request branch"))).toEqual(tokenize("update"));
    expect(leadingVerbs(tokenize("Kubernetes resources"))).toEqual([]);
  });
});
