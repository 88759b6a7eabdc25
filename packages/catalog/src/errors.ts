/** Base of every error @codemux/catalog raises; `code` is stable for callers to branch on. */
export class CatalogError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

export class UnknownToolError extends CatalogError {
  constructor(readonly requested: string, suggestions: string[]) {
    super(
      "UNKNOWN_TOOL",
      `No tool named "${requested}".${suggestions.length ? ` Did you mean ${suggestions.map((s) => `"${s}"`).join(", ")}?` : ""} Names look like "server__tool"; search_tools finds them.`,
    );
  }
}
