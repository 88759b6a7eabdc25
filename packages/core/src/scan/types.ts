import type { ToolDefinition } from "../tool";

/** How bad a finding is: `info` is noted only, `warn` is shown, `high` and `critical` are what a policy holds back. */
export type ScanSeverity = "info" | "warn" | "high" | "critical";

/** A tool's, an item's or a server's verdict: the worst severity among its findings, `clean` with none. */
export type ScanVerdict = "clean" | ScanSeverity;

/** What a finding is about. */
export type ScanRule =
  /** Unicode tag characters, zero-width characters, bidi controls, other control and format characters. */
  | "hidden-characters"
  /** Text that talks to the model over the user's head: "ignore previous instructions", "SYSTEM:", `<IMPORTANT>`, "do not tell the user". */
  | "model-instructions"
  /** Credential files (`~/.ssh/id_rsa`, `.env`, `~/.aws/credentials`), keys and tokens, asked to be read or passed on. */
  | "secret-reference"
  /** Data sent to an address or URL the text names, a markdown image that carries data away, files smuggled through a parameter. */
  | "exfiltration"
  /** Text that names or redirects another server's tools. */
  | "shadowing"
  /** Text past the scan's size or depth bounds: it reaches the model unread. */
  | "oversize";

export interface ScanFinding {
  rule: ScanRule;
  severity: ScanSeverity;
  /**
   * The field: `tools[send].inputSchema.properties.note.description`, `instructions`,
   * `prompts[review].arguments[code].description`, `resources[file:///notes].description`.
   */
  path: string;
  /** True when the text is the name of the member at `path` (a property's name), not its value. */
  key?: true;
  /** UTF-16 offsets into the field's text; `end` is exclusive. */
  start: number;
  end: number;
  /** One sentence for a person: what was found, with the text it matched quoted (hidden characters shown as `\u{...}`). */
  message: string;
}

/** A resource (or resource template) as a server lists it: the parts that reach the model. */
export interface ScanResourceDefinition {
  uri?: string;
  uriTemplate?: string;
  name?: string;
  title?: string;
  description?: string;
  mimeType?: string;
  [key: string]: unknown;
}

/** A prompt as a server lists it. */
export interface ScanPromptDefinition {
  name: string;
  title?: string;
  description?: string;
  arguments?: Array<{ name: string; title?: string; description?: string; [key: string]: unknown }>;
  [key: string]: unknown;
}

/** What one downstream server sends that reaches the model. */
export interface ScanInput {
  /** The server's name in the configuration. */
  server: string;
  /** The `instructions` of its `initialize` result. */
  instructions?: string;
  tools?: readonly ToolDefinition[];
  resources?: readonly ScanResourceDefinition[];
  resourceTemplates?: readonly ScanResourceDefinition[];
  prompts?: readonly ScanPromptDefinition[];
}

/** Another server behind the same codemux: text naming it or its tools with a directive is shadowing. */
export interface ScanOtherServer {
  name: string;
  tools: readonly string[];
}

export interface ScanOptions {
  otherServers?: readonly ScanOtherServer[];
}

export interface ScanReport {
  server: string;
  /** The worst finding anywhere in what the server sent. */
  verdict: ScanVerdict;
  /** Every tool the server listed, by its name (a name listed twice gets the worse verdict). */
  tools: Map<string, ScanVerdict>;
  /** Resources and resource templates by `uri` (or `uriTemplate`), prompts by name. */
  resources: Map<string, ScanVerdict>;
  prompts: Map<string, ScanVerdict>;
  instructions: ScanVerdict;
  /** In the order the fields were read; at most `SCAN_LIMITS.findings` of them. */
  findings: ScanFinding[];
  /** Findings past that limit: counted in the verdicts, not listed. */
  omitted: number;
}
