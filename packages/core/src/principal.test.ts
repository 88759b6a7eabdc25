import { describe, expect, it } from "vitest";
import { principalOfName } from "./principal";

describe("principalOfName", () => {
  it("reads a bare name as the token of that name", () => {
    expect(principalOfName("bob")).toBe("token:bob");
    expect(principalOfName("ci-runner.1@team")).toBe("token:ci-runner.1@team");
  });

  it("keeps an id with a kind, and the owner's and the no-auth principals, as they are", () => {
    for (const id of ["token:bob", "oauth:https://idp.example#42", "local", "anonymous"]) expect(principalOfName(id)).toBe(id);
  });
});
