/** A saved snippet, importable as `mcp/skills/<name>`. */
export interface Skill {
  name: string;
  description: string;
  code: string;
  /** `name(input: { ... }): Promise<...>`, as the type checker saw it when saved. */
  signature: string;
  savedAt: string;
  /** The tools it imports (`server__tool`), each with a hash of its schemas when the skill was saved. */
  tools: Record<string, string>;
  /** `saved` by a principal (in the data folder or the shared store), or from the `project` folder a team commits. */
  origin: "saved" | "project";
}
