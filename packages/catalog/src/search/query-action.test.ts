import { describe, expect, it } from "vitest";
import { queryAction } from "./query-action";
import { stem } from "./stem";

describe("queryAction", () => {
  it.each([
    ["delete old branches in gitlab", "delete"],
    ["Listing pods", "list"],
    ["please show me the logs", "show"],
  ])("%s -> %s", (query, verb) => {
    expect(queryAction(query)).toBe(stem(verb));
  });

  it.each([
    // a noun phrase, a question, a verb that opens a noun phrase
    "recent log events",
    "who changed this line",
    "pull request files",
    "",
  ])("finds no action in %j", (query) => {
    expect(queryAction(query)).toBeUndefined();
  });
});
