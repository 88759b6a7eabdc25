import { describe, expect, it } from "vitest";
import { asksToRead, queryAction } from "./query-action";
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

describe("asksToRead", () => {
  it.each(["who changed this line", "details of one commit", "notion page content in markdown", "indexes"])("%j asks to read", (query) => {
    expect(asksToRead(query)).toBe(true);
  });

  it.each([
    // a known verb, or an unknown one followed by its object or a particle
    "list pods",
    "file a bug report",
    "link two entities",
    "comment on a page",
    "",
  ])("%j does not", (query) => {
    expect(asksToRead(query)).toBe(false);
  });
});
