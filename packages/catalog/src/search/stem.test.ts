import { describe, expect, it } from "vitest";
import { stem } from "./stem";

describe("stem", () => {
  it.each([
    [["create", "creates", "created", "creating", "creation"]],
    [["delete", "deleted", "deletion", "deletes"]],
    [["list", "lists", "listing", "listed"]],
    [["query", "queries"]],
    [["modify", "modified"]],
    [["configure", "configured", "configuration"]],
    [["branch", "branches"]],
    [["run", "running"]],
    [["commit", "commits", "committed"]],
    [["deploy", "deployment", "deployments"]],
  ])("maps %j to one key", (forms) => {
    expect(new Set(forms.map(stem)).size).toBe(1);
  });

  it("leaves short words, words it would break and non-words alone", () => {
    expect(stem("get")).toBe("get");
    expect(stem("string")).toBe("string");
    expect(stem("status")).toBe("status");
    expect(stem("k8s")).toBe("k8s");
  });
});
