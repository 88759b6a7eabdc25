import type { SearchDocument } from "./types";

const NOTION_ERRORS = " Error Responses: 403: The integration lacks the read/update content capability required for this page.";

/** A small hand-made catalog in the shape of real MCP servers, for the ranking tests. */
export const TEST_CATALOG: SearchDocument[] = [
  tool("github__create_pull_request", "Create a new pull request in a GitHub repository", ["owner", "repo", "title", "head", "base"]),
  tool("github__list_pull_requests", "List and filter repository pull requests", ["owner", "repo", "state"]),
  tool("github__merge_pull_request", "Merge a pull request", ["owner", "repo", "pull_number"]),
  tool("github__create_issue", "Create a new issue in a GitHub repository", ["owner", "repo", "title", "body"]),
  tool("github__search_repositories", "Search for GitHub repositories", ["query", "page"]),
  tool("github__list_commits", "Get list of commits of a branch in a GitHub repository", ["owner", "repo", "sha"]),
  tool("github__update_pull_request_branch", "Update a pull request branch with the latest changes from the base branch", ["owner", "repo", "pull_number"]),
  tool("github__get_issue", "Get details of a specific issue in a GitHub repository.", ["owner", "repo", "issue_number"]),
  tool("github__update_issue", "Update an existing issue in a GitHub repository", ["owner", "repo", "issue_number", "state"]),
  tool("github__get_file_contents", "Get the contents of a file or directory from a GitHub repository", ["owner", "repo", "path"]),
  tool("gitlab__create_issue", "Create a new issue in a GitLab project", ["project_id", "title"]),
  tool("gitlab__create_repository", "Create a new GitLab project", ["name: Repository name", "visibility: Repository visibility level"]),
  tool("gitlab__create_branch", "Create a new branch in a GitLab project", [
    "project_id: Project ID or URL-encoded path",
    "branch: Name for the new branch",
    "ref: Source branch/commit for new branch",
  ]),
  tool("gitlab__create_merge_request", "Create a new merge request in a GitLab project", ["project_id", "source_branch"]),
  tool("slack__slack_post_message", "Post a new message to a Slack channel", ["channel_id", "text"]),
  tool("slack__slack_list_channels", "List public channels in the workspace with pagination", ["limit", "cursor"]),
  tool("slack__slack_add_reaction", "Add a reaction emoji to a message", ["channel_id", "timestamp", "reaction"]),
  tool("filesystem__read_text_file", "Read the complete contents of a file from the file system as text.", ["path", "head", "tail"]),
  tool("filesystem__write_file", "Create a new file or completely overwrite an existing file with new content.", ["path", "content"]),
  tool("filesystem__list_directory", "Get a detailed listing of all files and directories in a specified path.", ["path"]),
  tool("filesystem__create_directory", "Create a new directory or ensure a directory exists.", ["path"]),
  tool("filesystem__move_file", "Move or rename files and directories.", ["source", "destination"]),
  tool("git__git_commit", "Create a new commit with staged changes in the repository.", ["path", "message"]),
  tool("git__git_status", "Show the working tree status including staged, unstaged, and untracked files.", ["path"]),
  tool("git__git_log", "View commit history with optional filtering by author or date.", ["path", "maxCount"]),
  tool("git__git_checkout", "Switch branches or restore working tree files.", ["path", "target"]),
  tool("git__git_rebase", "Rebase commits onto another branch.", ["path", "upstream"]),
  tool("git__git_pull", "Pull changes from a remote repository. Fetches and integrates changes into the current branch.", ["path", "remote"]),
  tool("git__git_init", "Initialize a new Git repository at the specified path.", ["path"]),
  tool("git__git_worktree", "Manage worktrees: list, add, remove or move them.", ["path", "mode", "worktreePath"]),
  tool("kubernetes__kubectl_get", "Get or list Kubernetes resources by resource type, name, and namespace", [
    "resourceType: Type of resource to get (e.g., pods, deployments, services)",
    "name",
    "namespace",
  ]),
  tool("kubernetes__kubectl_logs", "Get logs from Kubernetes resources like pods or deployments", ["resourceType", "name", "container"]),
  tool("kubernetes__exec_in_pod", "Execute a command in a Kubernetes pod or container and return the output.", ["name", "namespace", "command"]),
  tool("kubernetes__port_forward", "Forward a local port to a port on a Kubernetes resource", ["resourceName", "localPort", "targetPort"]),
  tool("postgres__query", "Run a read-only SQL query", ["sql"]),
  tool("notion__API-post-page", "Notion | Create a page", ["parent", "properties"]),
  tool("notion__API-retrieve-a-block", "Notion | Retrieve a block", ["block_id"]),
  tool("notion__API-retrieve-page-markdown", `Notion | Retrieve a page as Markdown${NOTION_ERRORS}`, ["page_id"]),
  tool("notion__API-update-page-markdown", `Notion | Update a page's content as Markdown${NOTION_ERRORS}`, ["page_id", "replace_content"]),
  tool("mongodb__find", "Run a find query against a MongoDB collection", ["database", "collection", "filter"]),
  tool("mongodb__export", "Export a query or aggregation results in the specified EJSON format.", ["database", "collection"]),
  tool("mongodb__collection-schema", "Describe the schema for a collection", ["database", "collection"]),
  tool("mongodb__collection-storage-size", "Gets the size of the collection", ["database", "collection"]),
  tool("google-maps__maps_geocode", "Convert an address into geographic coordinates", ["address"]),
  tool("google-maps__maps_search_places", "Search for places using Google Places API", ["query", "location"]),
  tool("playwright__browser_navigate", "Navigate to a URL", ["url"]),
  tool("playwright__browser_take_screenshot", "Take a screenshot of the current page.", ["filename", "fullPage"]),
  tool("chrome-devtools__select_page", "Select a page as a context for future tool calls.", ["pageIdx"]),
  tool("playwright__browser_tabs", "List, create, close, or select a browser tab.", ["action", "index"]),
  tool("sentry__whoami", "Identify the authenticated user in Sentry.", []),
  tool("sentry__find_teams", "Find teams in an organization in Sentry.", ["organizationSlug"]),
  tool("sentry__find_projects", "Find projects in Sentry.", ["organizationSlug"]),
  tool("stripe__list_webhooks", "List the endpoints that receive notifications.", []),
  tool("stripe__list_events", "List recent events, including those from web checkouts.", []),
  tool("sequential-thinking__sequentialthinking", "A tool for dynamic and reflective problem-solving through thoughts.", ["thought"]),
];

/** `id` is `server__name`; `parameters` are names, or "name: description". */
function tool(id: string, description: string, parameters: string[]): SearchDocument {
  const [server = "", name = ""] = id.split("__");
  return {
    id,
    server,
    name,
    description,
    parameters: parameters.map((p) => {
      const [paramName = "", paramDescription] = p.split(": ");
      return paramDescription === undefined ? { name: paramName } : { name: paramName, description: paramDescription };
    }),
  };
}
