import { CodemuxError } from "@codemux/core";

export type CatalogErrorCode = "UNKNOWN_TOOL";

/** Base of every error @codemux/catalog raises; `code` is stable for callers to branch on. */
export class CatalogError extends CodemuxError<CatalogErrorCode> {
  static override readonly package = "catalog";
}

/** No tool goes by the name asked for; the message suggests close names. */
export class UnknownToolError extends CatalogError {
  readonly requested: string;
  readonly suggestions: string[];

  constructor(requested: string, suggestions: string[]) {
    super(
      "UNKNOWN_TOOL",
      `No tool named "${requested}".${suggestions.length ? ` Did you mean ${suggestions.map((s) => `"${s}"`).join(", ")}?` : ""} Names look like "server__tool"; search_tools finds them.`,
      { data: { requested, suggestions } },
    );
    this.requested = requested;
    this.suggestions = suggestions;
  }

  static override isInstance<T extends abstract new (...args: never[]) => CodemuxError>(this: T, value: unknown): value is InstanceType<T> {
    return CatalogError.isInstance(value) && value.code === "UNKNOWN_TOOL";
  }
}
