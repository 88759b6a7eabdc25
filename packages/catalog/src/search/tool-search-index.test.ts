import { describe, expect, it } from "vitest";
import { DEFAULT_SERVERS_CATALOG } from "./default-servers-catalog";
import { TEST_CATALOG } from "./test-catalog";
import { replacementName, saysDeprecated } from "./deprecation";
import { ToolSearchIndex, askedAbout } from "./tool-search-index";
import type { SearchDocument, SearchOptions } from "./types";

function indexOf(docs: SearchDocument[] = TEST_CATALOG): ToolSearchIndex {
  const index = new ToolSearchIndex();
  for (const doc of docs) index.add(doc);
  return index;
}

const ids = (index: ToolSearchIndex, query: string, options: SearchOptions = {}) => index.search(query, options).map((h) => h.id);
const top = (index: ToolSearchIndex, query: string) => ids(index, query, { limit: 1 })[0];

describe("ToolSearchIndex ranking", () => {
  const index = indexOf();

  it.each([
    // identifier splitting: snake_case, kebab-case, API-post-page
    ["post message", "slack__slack_post_message"],
    ["notion post page", "notion__API-post-page"],
    // stemming: plural and -ing forms meet the name
    ["listing channels", "slack__slack_list_channels"],
    ["committing staged changes", "git__git_commit"],
    // synonyms and abbreviations
    ["new PR", "github__create_pull_request"],
    ["make a new folder", "filesystem__create_directory"],
    ["show k8s pod logs", "kubernetes__kubectl_logs"],
    ["fetch a block from notion", "notion__API-retrieve-a-block"],
    ["capture an image of the page", "playwright__browser_take_screenshot"],
    // a typo, a prefix
    ["screnshot", "playwright__browser_take_screenshot"],
    ["kuberntes port", "kubernetes__port_forward"],
    ["screensh", "playwright__browser_take_screenshot"],
    // a server word decides between same-named tools
    ["open an issue on gitlab", "gitlab__create_issue"],
    ["open an issue on github", "github__create_issue"],
    // a phrase written as one word in the tool name
    ["who am i in sentry", "sentry__whoami"],
    ["web hooks", "stripe__list_webhooks"],
  ])("%s -> %s", (query, expected) => {
    expect(top(index, query)).toBe(expected);
  });

  it("prefers the tools of a server the query names", () => {
    expect(top(index, "select rows from a postgres table")).toBe("postgres__query");
  });

  it("passes over tools whose verbs contradict the query's verb", () => {
    // exec_in_pod names the pods; kubectl_get lists them.
    expect(top(index, "list pods in a namespace")).toBe("kubernetes__kubectl_get");
  });

  it("breaks ties between name matches by how much of the first sentence the query covers", () => {
    expect(top(index, "create a new gitlab project")).toBe("gitlab__create_repository");
    const pair = indexOf([
      { id: "gitlab__create_repository", server: "gitlab", name: "create_repository", description: "Create a new project.", parameters: [] },
      {
        id: "gitlab__create_branch",
        server: "gitlab",
        name: "create_branch",
        description: "Create a new branch in a project. A new project starts with one branch; the new branch starts from it.",
        parameters: [],
      },
    ]);
    expect(top(pair, "create a new project")).toBe("gitlab__create_repository");
  });

  it("reads the verb of a spelled-out phrase as part of the noun", () => {
    // "pull" of `git_pull`, not the "pull" of "pull request".
    expect(top(index, "pull the latest changes")).toBe("git__git_pull");
  });

  it("matches a name that joins the stems of two query words", () => {
    expect(top(index, "add a second working tree for the repo")).toBe("git__git_worktree");
  });

  it("holds creating against a request to change less than reading", () => {
    const files = indexOf([
      ...TEST_CATALOG.filter((d) => d.server !== "filesystem"),
      doc("fs__write_file", "Create a new file or completely overwrite an existing file with new content.", ["path"]),
      doc("fs__get_file_info", "Retrieve detailed metadata about an existing file.", ["path"]),
    ]);
    const hits = ids(files, "modify an existing file", { limit: 5 });
    expect(hits.indexOf("fs__write_file")).toBeLessThan(hits.indexOf("fs__get_file_info"));
  });

  it("reads the verb after a request's preamble", () => {
    // "how do I" opens a request to delete, not a question about deleting.
    expect(top(index, "how do I list the pods in a namespace")).toBe("kubernetes__kubectl_get");
  });

  it("knows that marking an issue changes it", () => {
    expect(top(index, "mark a github issue as closed")).toBe("github__update_issue");
  });

  it("reads a query without a verb as asking to read", () => {
    expect(top(index, "notion page content in markdown form")).toBe("notion__API-retrieve-page-markdown");
    // an unknown verb with its object is not such a query
    expect(top(index, "file a new issue on github")).toBe("github__create_issue");
  });

  it.each([
    ["how big is the collection", "mongodb__collection-storage-size"],
    ["dump mongo query output to a file", "mongodb__export"],
    ["latitude and longitude of an address", "google-maps__maps_geocode"],
  ])("knows everyday words for sizes, dumps and coordinates: %s", (query, expected) => {
    expect(top(index, query)).toBe(expected);
  });

  it("ignores words that only say 'some other one'", () => {
    expect(top(index, "switch to another branch")).toBe("git__git_checkout");
  });

  it("reads a brand name in prose as one word, not as its parts", () => {
    expect(top(index, "commit history on GitHub")).toBe("github__list_commits");
    // "GitHub" in GitHub's descriptions must not make them about git.
    expect(ids(index, "commits of a git repository", { limit: 4 })).toContain("git__git_log");
  });

  it("ranks the tool whose name the query covers above ones that only mention the words", () => {
    expect(ids(index, "list directory", { limit: 2 })).toEqual(["filesystem__list_directory", "filesystem__create_directory"]);
  });

  it("keeps to one server when asked", () => {
    const hits = ids(index, "create issue", { limit: 10, server: "gitlab" });
    expect(hits[0]).toBe("gitlab__create_issue");
    expect(hits.every((id) => id.startsWith("gitlab__"))).toBe(true);
  });

  it("returns nothing for a query of stopwords or unknown words", () => {
    expect(index.search("the of and")).toEqual([]);
    expect(index.search("zzzzzz qqqqq")).toEqual([]);
  });

  it("honours the limit and sorts by score", () => {
    const hits = index.search("create", { limit: 3 });
    expect(hits).toHaveLength(3);
    expect(hits[0]!.score).toBeGreaterThanOrEqual(hits[1]!.score);
    expect(hits[1]!.score).toBeGreaterThanOrEqual(hits[2]!.score);
  });

  it("ranks the same whatever order the tools were added in", () => {
    const reversed = indexOf([...TEST_CATALOG].reverse());
    for (const query of ["create issue", "file", "get", "pull request repository"]) {
      expect(reversed.search(query, { limit: 20 })).toEqual(index.search(query, { limit: 20 }));
    }
  });

  it("breaks score ties by id", () => {
    const twins = indexOf([
      { id: "b__ping", server: "b", name: "ping", parameters: [] },
      { id: "a__ping", server: "a", name: "ping", parameters: [] },
    ]);
    expect(ids(twins, "ping")).toEqual(["a__ping", "b__ping"]);
  });
});

describe("ToolSearchIndex updates", () => {
  it("adds, replaces and removes tools one at a time", () => {
    const index = indexOf();
    expect(index.size).toBe(TEST_CATALOG.length);

    index.add({ id: "jira__create_ticket", server: "jira", name: "create_ticket", description: "Create a Jira ticket", parameters: [] });
    expect(index.size).toBe(TEST_CATALOG.length + 1);
    expect(top(index, "jira ticket")).toBe("jira__create_ticket");

    index.add({ id: "jira__create_ticket", server: "jira", name: "create_ticket", description: "File a bug report", parameters: [] });
    expect(index.size).toBe(TEST_CATALOG.length + 1);
    expect(top(index, "bug report")).toBe("jira__create_ticket");

    index.remove("jira__create_ticket");
    index.remove("jira__create_ticket");
    expect(index.size).toBe(TEST_CATALOG.length);
    expect(ids(index, "jira ticket bug report")).not.toContain("jira__create_ticket");
  });

  it("ranks after removals exactly as an index built without those tools", () => {
    const index = indexOf();
    const gone = TEST_CATALOG.filter((d) => d.server === "github");
    for (const doc of gone) index.remove(doc.id);
    const fresh = indexOf(TEST_CATALOG.filter((d) => d.server !== "github"));
    for (const query of ["create issue", "pull request", "read a file", "logs"]) {
      expect(index.search(query, { limit: 20 })).toEqual(fresh.search(query, { limit: 20 }));
    }
  });
});

describe("ToolSearchIndex on the built-in default servers", () => {
  const index = indexOf(DEFAULT_SERVERS_CATALOG);

  it("ranks a tool whose description says deprecated below its replacement", () => {
    const hits = ids(index, "read a file", { limit: 5 });
    expect(hits[0]).toBe("filesystem__read_text_file");
    expect(hits.indexOf("filesystem__read_file")).toBeGreaterThan(hits.indexOf("filesystem__read_text_file"));
  });

  it("passes over tools that name neither a query's unknown verb nor its synonyms", () => {
    // "link" is no verb of the list; WordNet relates it to "relate", which `create_relations` names.
    expect(top(index, "link two entities")).toBe("memory__create_relations");
  });

  it("reads two words the everyday vocabulary writes as one by that word's meaning", () => {
    // "look up" is lookup (find, search), before WordNet's "consult".
    expect(top(index, "look up nodes about a topic")).toBe("memory__search_nodes");
  });

  it("still finds a deprecated tool by its own name", () => {
    expect(ids(index, "read_file", { limit: 5 })).toContain("filesystem__read_file");
  });
});

describe("replacementName", () => {
  it.each([
    ["Read a file as text. DEPRECATED: Use read_text_file instead.", "read_text_file"],
    ["Deprecated, replaced by `search_v2`.", "search_v2"],
    ["Use this tool to read files. DEPRECATED: use read_text_file instead.", "read_text_file"],
    ["Lists pods.", undefined],
  ])("%s -> %s", (description, expected) => {
    expect(replacementName(description)).toBe(expected);
  });
});

describe("saysDeprecated", () => {
  it.each([
    ["Read a file as text. DEPRECATED: Use read_text_file instead.", true],
    ["This tool is deprecated; use search_v2.", true],
    ["Deprecated. Lists pods.", true],
    ["Create a page (deprecated)", true],
    ["List the deprecated APIs of a cluster", false],
    ["Read a file as text.", false],
  ])("%s -> %s", (description, expected) => {
    expect(saysDeprecated(description)).toBe(expected);
  });
});

describe("ToolSearchIndex beyond the words a tool uses", () => {
  const maps = indexOf([
    doc("google-maps__maps_elevation", "Get elevation data for locations on the earth", ["locations"]),
    doc("google-maps__maps_search_places", "Search for places using Google Places API", ["query", "location"]),
    doc("google-maps__maps_directions", "Get directions between two points", ["origin", "destination"]),
    doc("dbhub__search_objects", "Search and list database objects (schemas, tables, columns, procedures, functions, indexes) at a detail level", [
      "detail_level",
    ]),
    doc("git__git_cherry_pick", "Cherry-pick commits from other branches.", ["commits"]),
    doc("git__git_commit", "Create a new commit with staged changes in the repository.", ["message"]),
  ]);

  it("expands a query word to its dictionary synonyms", () => {
    expect(top(maps, "altitude of a spot")).toBe("google-maps__maps_elevation");
  });

  it("does not read a dictionary word as the start of a longer one", () => {
    const sea = indexOf([doc("maps__search_places", "Search for places", ["query"]), doc("tides__ocean_tides", "Tide tables for a coast", ["station"])]);
    // "sea" is a word (ocean), not the start of "search"; "sear" is a start.
    expect(top(sea, "sea")).toBe("tides__ocean_tides");
    expect(top(sea, "sear")).toBe("maps__search_places");
  });

  it("reads a phrasal verb by what it means, not by its words", () => {
    const git = indexOf([
      ...TEST_CATALOG,
      doc("github__search_code", "Search for code across GitHub repositories", ["q"]),
      doc("playwright__browser_run_code", "Run a Playwright code snippet", ["code"]),
    ]);
    // "look for" is search; "for" alone is a stopword and "look" no verb of the list.
    expect(top(git, "look for code snippets in public repositories")).toBe("github__search_code");
  });

  it("reads everyone, anyone, someone as people, that is users", () => {
    const slack = indexOf([
      ...TEST_CATALOG,
      doc("slack__slack_get_users", "Get a list of all users in the workspace with their basic profile information", ["cursor", "limit"]),
    ]);
    expect(top(slack, "list everyone in the slack workspace")).toBe("slack__slack_get_users");
  });

  it("splits a joined word into words of the index", () => {
    expect(top(maps, "cherrypick a commit")).toBe("git__git_cherry_pick");
  });

  it("reads what an enum parameter can be set to as what the tool does", () => {
    const browser = indexOf([
      {
        ...doc("playwright__browser_emulate_media", "Emulate media features for the page", []),
        parameters: [{ name: "colorScheme", values: ["light", "dark", "no-preference"] }],
      },
      doc("playwright__browser_navigate", "Navigate the page to a URL", ["url"]),
      doc("playwright__browser_resize", "Resize the page", ["width", "height"]),
    ]);
    expect(top(browser, "switch the page to dark")).toBe("playwright__browser_emulate_media");
  });

  it("passes over a long enum list: it is data, not what the tool does", () => {
    const zones = Array.from({ length: 11 }, (_, i) => `Zone${i} closed`);
    const index = indexOf([
      { ...doc("time__convert_time", "Convert a time between zones", []), parameters: [{ name: "zone", values: zones }] },
      doc("github__close_issue", "Close an issue", ["issue_number"]),
    ]);
    expect(ids(index, "closed")).toEqual(["github__close_issue"]);
  });

  it("reads what a question asks for: how far is a distance, who a user", () => {
    const index = indexOf([
      doc("google-maps__maps_distance_matrix", "Calculate travel distance and time for multiple origins and destinations", ["origins"]),
      doc("everything__get-sum", "Returns the sum of two numbers", ["a", "b"]),
      doc("sentry__find_teams", "Find teams in Sentry", ["organizationSlug"]),
      doc("sentry__find_users", "Find users in Sentry", ["organizationSlug"]),
    ]);
    expect(top(index, "how far apart are these two towns")).toBe("google-maps__maps_distance_matrix");
    expect(top(index, "who is in sentry")).toBe("sentry__find_users");
  });

  it("reads 'currently' as asking for a state", () => {
    const index = indexOf([
      doc("git__git_status", "Shows the working tree status", ["repo_path"]),
      doc("filesystem__edit_file", "Make line-based edits to a text file", ["path"]),
      doc("filesystem__read_file", "Read the complete contents of a file", ["path"]),
    ]);
    expect(ids(index, "which files are currently modified")).toContain("git__git_status");
    expect(ids(index, "which files are modified")).not.toContain("git__git_status");
    expect(askedAbout(["what", "is", "currently", "running"])).toEqual([["status", "state"]]);
  });

  it("hears a question word only where it opens the query", () => {
    expect(askedAbout(["when", "was", "it", "changed"])).toEqual([["time", "date"]]);
    expect(askedAbout(["tell", "me", "how", "many", "pods"])).toEqual([["count", "number", "total"]]);
    expect(askedAbout(["notify", "me", "when", "the", "site", "changes"])).toEqual([]);
  });

  it("prefers the words as written among tools that share their stems", () => {
    // Same stems, same lengths: only the forms as written tell them apart (ties break by id, "a" first).
    const logs = indexOf([doc("a__log_entries", "Log entries", []), doc("b__entry_logs", "Entry logs", [])]);
    expect(top(logs, "all the logs")).toBe("b__entry_logs");
    expect(top(logs, "all the entries")).toBe("a__log_entries");
  });

  it("leaves out what the query says it does not want", () => {
    const git = indexOf([
      doc("git__git_fetch", "Fetch updates from a remote repository. Downloads objects and refs.", ["remote"]),
      doc("git__git_pull", "Pull updates from a remote and merge them into the current branch.", ["remote"]),
      doc("playwright__browser_hover", "Hover over element on page", ["element"]),
      doc("playwright__browser_click", "Perform click on a web page", ["element"]),
    ]);
    expect(top(git, "get updates from the remote without merging them")).toBe("git__git_fetch");
    expect(top(git, "move the mouse over an element on the page without clicking")).toBe("playwright__browser_hover");
  });
});

describe("ToolSearchIndex document kinds", () => {
  const kinds = [
    ...TEST_CATALOG,
    { ...doc("filesystem__file:///README.md", "The project's readme file, in markdown", []), kind: "resource" as const },
    { ...doc("github__review-pull-request", "Review a pull request and leave comments", ["pr"]), kind: "prompt" as const },
    { ...doc("skills__create-issue-from-error", "Create a GitHub issue from an error in the logs", []), kind: "skill" as const },
  ];
  const index = indexOf(kinds);

  it("marks each hit with its kind, tool unless the document says otherwise", () => {
    const hits = index.search("review a pull request", { limit: 20 });
    expect(hits.find((h) => h.id === "github__review-pull-request")?.kind).toBe("prompt");
    expect(hits.find((h) => h.id === "github__create_pull_request")?.kind).toBe("tool");
  });

  it("returns only the kinds asked for", () => {
    expect(index.search("readme file", { kinds: ["resource"] }).map((h) => h.id)).toEqual(["filesystem__file:///README.md"]);
    const tools = index.search("create issue from an error", { kinds: ["tool"], limit: 20 });
    expect(tools.length).toBeGreaterThan(0);
    expect(tools.every((h) => h.kind === "tool")).toBe(true);
  });

  it("keeps the tools' order and scores in a list mixed with other kinds", () => {
    const toolsOnly = indexOf();
    for (const query of ["create issue from an error", "review a pull request", "readme file", "how many pods", "list channels without archived"]) {
      const mixed = index.search(query, { limit: 50 }).filter((h) => h.kind === "tool");
      expect(mixed).toEqual(toolsOnly.search(query, { limit: mixed.length }));
    }
  });

  it("ranks tools exactly as before when other kinds share the index", () => {
    const toolsOnly = indexOf();
    for (const query of ["create issue", "review a pull request", "read a file", "list channels", "error logs"]) {
      expect(index.search(query, { limit: 10, kinds: ["tool"] })).toEqual(toolsOnly.search(query, { limit: 10 }));
    }
  });
});

describe("ToolSearchIndex document kinds, words only they have", () => {
  const tools = [
    doc("git__git_cherry_pick", "Cherry-pick commits from other branches.", ["commits"]),
    doc("git__git_commit", "Create a new commit with staged changes.", ["message"]),
    doc("gitlab__create_issue", "Create a new issue in a GitLab project", ["title"]),
    doc("github__create_issue", "Create a new issue in a GitHub repository", ["title"]),
    doc("docs__search_gitlab_docs", "Search the gitlab documentation", ["query"]),
  ];
  const others = [
    // A joined word, and a server's name, that only documents of other kinds have.
    { ...doc("skills__cherrypick-fix", "Cherrypick a fix onto the release branch", []), kind: "skill" as const },
    ...["a", "b", "c"].map((n) => ({ ...doc(`gitlab__prompt-${n}`, `Prompt ${n} about issues`, []), kind: "prompt" as const })),
  ];

  it("reads a query for tools as if they were not there", () => {
    const mixed = indexOf([...tools, ...others]);
    const toolsOnly = indexOf(tools);
    for (const query of ["cherrypick a commit", "create an issue in gitlab"]) {
      expect(mixed.search(query, { limit: 10, kinds: ["tool"] })).toEqual(toolsOnly.search(query, { limit: 10 }));
    }
  });
});

describe("ToolSearchIndex document kinds, removed", () => {
  it("ranks tools exactly as before once the other kinds are gone again", () => {
    const index = indexOf([
      ...TEST_CATALOG,
      { ...doc("skills__create-issue-from-error", "Create a GitHub issue from an error in the logs", []), kind: "skill" as const },
    ]);
    index.remove("skills__create-issue-from-error");
    expect(index.search("create issue from an error", { limit: 10 })).toEqual(indexOf().search("create issue from an error", { limit: 10 }));
  });
});

/** `id` is `server__name`. */
function doc(id: string, description: string, parameters: string[]): SearchDocument {
  const [server = "", name = ""] = id.split("__");
  return { id, server, name, description, parameters: parameters.map((p) => ({ name: p })) };
}
