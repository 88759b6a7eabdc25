import { describe, expect, it } from "vitest";
import { compounds, rawWords, tokenize } from "./tokenize";

describe("tokenize", () => {
  it("splits identifiers of every casing", () => {
    expect(tokenize("getPullRequest")).toEqual(tokenize("get pull request"));
    expect(tokenize("list_directory_with_sizes")).toEqual(tokenize("list directory sizes"));
    expect(tokenize("API-post-page")).toEqual(tokenize("api post page"));
    expect(tokenize("HTTPServer base64")).toEqual(tokenize("http server base 64"));
    expect(tokenize("HTTPServer")).toHaveLength(2);
  });

  it("keeps capitalised names whole in prose and splits them in identifiers", () => {
    expect(tokenize("a GitHub repo and a DaemonSet", { prose: true })).toEqual(["github", "repository", "daemonset"]);
    expect(tokenize("GitHub")).toEqual(["git", "hub"]);
    expect(tokenize("CreateIssue")).toEqual(["creat", "issu"]);
  });

  it("spells out abbreviations, singular or plural", () => {
    expect(tokenize("repo")).toEqual(tokenize("repository"));
    expect(tokenize("PRs")).toEqual(tokenize("pull requests"));
    expect(tokenize("k8s")).toEqual(tokenize("kubernetes"));
    expect(tokenize("db config")).toEqual(tokenize("database configuration"));
  });

  it("makes the verb that opens a spelled-out phrase part of the noun", () => {
    expect(tokenize("pull_request")).toEqual(["pullrequest", "request"]);
    expect(tokenize("pull the latest changes", { prose: true })[0]).toBe("pull");
  });

  it("drops stopwords and one-letter words", () => {
    expect(tokenize("show me all of the files in a folder")).toEqual(["show", "fil", "folder"]);
  });
});

describe("rawWords", () => {
  it("splits identifiers but neither stems nor drops words", () => {
    expect(rawWords("who am I in getPullRequest")).toEqual(["who", "am", "i", "in", "get", "pull", "request"]);
  });
});

describe("compounds", () => {
  it("joins adjacent words, stopwords included", () => {
    expect(compounds("who am I")).toEqual(["whoam", "whoami", "ami"]);
    expect(compounds("file system")).toContain("filesystem");
    expect(new Set(compounds("who am I")).size).toBe(compounds("who am I").length);
  });

  it("also joins the words' stems", () => {
    expect(compounds("add a working tree")).toContain(tokenize("worktree")[0]);
  });
});
