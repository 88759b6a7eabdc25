import type { SearchDocument } from "./types";

/**
 * The tools of codemux's built-in default servers as they list them (names and
 * descriptions verbatim from @modelcontextprotocol/server-filesystem and server-memory
 * 2026.8.31), for ranking tests that must hold on what users get out of the box.
 */
export const DEFAULT_SERVERS_CATALOG: SearchDocument[] = [
  tool("filesystem__read_file", "Read the complete contents of a file as text. DEPRECATED: Use read_text_file instead.", ["path", "tail", "head"]),
  tool(
    "filesystem__read_text_file",
    "Read the complete contents of a file from the file system as text. Handles various text encodings and provides detailed error messages if the file cannot be read. Use this tool when you need to examine the contents of a single file. Use the 'head' parameter to read only the first N lines of a file, or the 'tail' parameter to read only the last N lines of a file. Operates on the file as text regardless of extension. Only works within allowed directories.",
    ["path", "tail", "head"],
  ),
  tool(
    "filesystem__read_media_file",
    "Read a file and return it as a base64-encoded content block with its MIME type. Image and audio files are returned as image/audio content; any other file type is returned as an embedded resource. Only works within allowed directories.",
    ["path"],
  ),
  tool(
    "filesystem__read_multiple_files",
    "Read the contents of multiple files simultaneously. This is more efficient than reading files one by one when you need to analyze or compare multiple files. Each file's content is returned with its path as a reference. Failed reads for individual files won't stop the entire operation. Only works within allowed directories.",
    ["paths"],
  ),
  tool(
    "filesystem__write_file",
    "Create a new file or completely overwrite an existing file with new content. Use with caution as it will overwrite existing files without warning. Handles text content with proper encoding. Only works within allowed directories.",
    ["path", "content"],
  ),
  tool(
    "filesystem__edit_file",
    "Make line-based edits to a text file. Each edit replaces exact line sequences with new content. Returns a git-style diff showing the changes made. Only works within allowed directories.",
    ["path", "edits", "dryRun"],
  ),
  tool(
    "filesystem__create_directory",
    "Create a new directory or ensure a directory exists. Can create multiple nested directories in one operation. If the directory already exists, this operation will succeed silently. Perfect for setting up directory structures for projects or ensuring required paths exist. Only works within allowed directories.",
    ["path"],
  ),
  tool(
    "filesystem__list_directory",
    "Get a detailed listing of all files and directories in a specified path. Results clearly distinguish between files and directories with [FILE] and [DIR] prefixes. This tool is essential for understanding directory structure and finding specific files within a directory. Only works within allowed directories.",
    ["path"],
  ),
  tool(
    "filesystem__list_directory_with_sizes",
    "Get a detailed listing of all files and directories in a specified path, including sizes. Results clearly distinguish between files and directories with [FILE] and [DIR] prefixes. This tool is useful for understanding directory structure and finding specific files within a directory. Only works within allowed directories.",
    ["path", "sortBy"],
  ),
  tool(
    "filesystem__directory_tree",
    "Get a recursive tree view of files and directories as a JSON structure. Each entry includes 'name', 'type' (file/directory), and 'children' for directories. Files have no children array, while directories always have a children array (which may be empty). The output is formatted with 2-space indentation for readability. Only works within allowed directories.",
    ["path", "excludePatterns"],
  ),
  tool(
    "filesystem__move_file",
    "Move or rename files and directories. Can move files between directories and rename them in a single operation. If the destination exists, the operation will fail. Works across different directories and can be used for simple renaming within the same directory. Both source and destination must be within allowed directories.",
    ["source", "destination"],
  ),
  tool(
    "filesystem__search_files",
    "Recursively search for files and directories matching a pattern. The patterns should be glob-style patterns that match paths relative to the working directory. Use pattern like '*.ext' to match files in current directory, and '**/*.ext' to match files in all subdirectories. Returns full paths to all matching items. Great for finding files when you don't know their exact location. Only searches within allowed directories.",
    ["path", "pattern", "excludePatterns"],
  ),
  tool(
    "filesystem__get_file_info",
    "Retrieve detailed metadata about a file or directory. Returns comprehensive information including size, creation time, last modified time, permissions, and type. This tool is perfect for understanding file characteristics without reading the actual content. Only works within allowed directories.",
    ["path"],
  ),
  tool(
    "filesystem__list_allowed_directories",
    "Returns the list of directories that this server is allowed to access. Subdirectories within these allowed directories are also accessible. Use this to understand which directories and their nested paths are available before trying to access files.",
    [],
  ),
  tool("memory__create_entities", "Create multiple new entities in the knowledge graph", ["entities"]),
  tool("memory__create_relations", "Create multiple new relations between entities in the knowledge graph. Relations should be in active voice", ["relations"]),
  tool("memory__add_observations", "Add new observations to existing entities in the knowledge graph", ["observations"]),
  tool("memory__delete_entities", "Delete multiple entities and their associated relations from the knowledge graph", ["entityNames"]),
  tool("memory__delete_observations", "Delete specific observations from entities in the knowledge graph", ["deletions"]),
  tool("memory__delete_relations", "Delete multiple relations from the knowledge graph", ["relations"]),
  tool("memory__read_graph", "Read the entire knowledge graph", []),
  tool("memory__search_nodes", "Search for nodes in the knowledge graph based on a query", ["query"]),
  tool("memory__open_nodes", "Open specific nodes in the knowledge graph by their names", ["names"]),
];

/** `id` is `server__name`. */
function tool(id: string, description: string, parameters: string[]): SearchDocument {
  const [server = "", name = ""] = id.split("__");
  return { id, server, name, description, parameters: parameters.map((p) => ({ name: p })) };
}
