/**
 * How a front end names its own ways in the hints of its answers: a large result's notice, a tool
 * not found, an empty search. Each renderer passes its own; an answer never points at a way its
 * reader does not have (no read_result in REST, no execute_code in passthrough).
 */
export interface AnswerHints {
  /** How to find tools: "search_tools finds them". */
  findTools: string;
  /** How to browse every tool, before "N tools of M servers": "list_modules to browse". */
  browse: string;
  /** How to read a kept result back, with its handle filled in. */
  readKept(handle: string): string;
  /** How to work with the whole value in code, where this front end has a way; absent where it has none. */
  inCode?: string;
}

/** Mode `code`: the meta-tools. */
export const CODE_HINTS: AnswerHints = {
  findTools: "search_tools finds them",
  browse: "list_modules to browse",
  readKept: (handle) => `Read it with read_result {"handle":"${handle}","op":"grep","pattern":"..."} (ops: stat, head, tail, slice, grep, read)`,
  inCode: "or process the data inside execute_code, where tools return the full value",
};

/** Mode `passthrough`: every tool listed, and read_result; no snippets. */
export const PASSTHROUGH_HINTS: AnswerHints = {
  findTools: "the tool list names them",
  browse: "the tool list to browse",
  readKept: CODE_HINTS.readKept,
};

/** Mode `dispatch`: one tool, `codemux`, with actions. */
export const DISPATCH_HINTS: AnswerHints = {
  findTools: 'codemux {"action":"search"} finds them',
  browse: 'codemux {"action":"list"} to browse',
  readKept: (handle) => `Read it with codemux {"action":"read","handle":"${handle}","op":"grep","pattern":"..."} (ops: stat, head, tail, slice, grep, read)`,
  inCode: 'or process the data with codemux {"action":"exec"}, where tools return the full value',
};

/** The REST gateway. */
export const REST_HINTS: AnswerHints = {
  findTools: "GET /v1/tools?q=... finds them",
  browse: "GET /v1/tools to browse",
  readKept: (handle) => `Read it with GET /v1/results/${handle}?op=grep&pattern=... (ops: stat, head, tail, slice, grep, read)`,
  inCode: "or process the data with POST /v1/exec, where tools return the full value",
};

/** The command line. */
export const CLI_HINTS: AnswerHints = {
  findTools: "codemux search finds them",
  browse: "codemux list to browse",
  readKept: (handle) => `It is kept as ${handle} while this command runs`,
  inCode: "or process the data with codemux exec, where tools return the full value",
};
