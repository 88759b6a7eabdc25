import { describe, expect, it } from "vitest";
import { asksToRead, queryAction, withoutExclusions, withoutPreamble } from "./query-action";
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

describe("withoutPreamble", () => {
  it.each([
    ["I want to persist a note", "persist a note"],
    ["I'd like to delete a branch", "delete a branch"],
    ["can you please list the pods", "list the pods"],
    ["How do I delete a branch?", "delete a branch?"],
    ["help me find a file", "find a file"],
    ["how many documents are there", "how many documents are there"],
    ["list pods", "list pods"],
  ])("%j -> %j", (query, request) => {
    expect(withoutPreamble(query)).toBe(request);
  });

  it("lets a request's verb decide after the preamble", () => {
    expect(queryAction("how do I delete a branch")).toBe(stem("delete"));
    expect(asksToRead("I want to link two entities")).toBe(false);
  });
});

describe("withoutExclusions", () => {
  it.each([
    ["fetch updates without merging", "fetch updates"],
    ["hover over the menu without clicking it, then wait", "hover over the menu , then wait"],
    ["list all files except hidden ones", "list all files"],
    ["read the page instead of taking a screenshot", "read the page"],
    ["delete branches other than main and keep tags", "delete branches and keep tags"],
  ])("%j -> %j", (query, kept) => {
    expect(withoutExclusions(query).replace(/\s+/g, " ").trim()).toBe(kept);
  });

  it.each(["without merging", "commit everything", "read without"])("keeps %j, where nothing else or nothing excluded would be left", (query) => {
    expect(withoutExclusions(query)).toBe(query);
  });

  it("leaves a very long query as it is", () => {
    const query = `list files ${"without x ".repeat(200)}`;
    expect(withoutExclusions(query)).toBe(query);
  });
});
