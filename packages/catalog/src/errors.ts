/** Marks every codemux error, whichever package and installed copy made it; the value names the package. */
export const ERROR_BRAND: unique symbol = Symbol.for("codemux.error");

export type CatalogErrorCode = "UNKNOWN_TOOL";

/** Base of every error @codemux/catalog raises; `code` is stable for callers to branch on. */
export class CatalogError extends Error {
  readonly [ERROR_BRAND] = "catalog";
  readonly code: CatalogErrorCode;
  readonly data: Record<string, unknown> | undefined;

  constructor(code: CatalogErrorCode, message: string, options: { cause?: unknown; data?: Record<string, unknown> } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.data = options.data;
  }

  /** True for a CatalogError from any installed copy of this package (where `instanceof` fails across copies). */
  static isInstance(value: unknown): value is CatalogError {
    return typeof value === "object" && value !== null && (value as { [ERROR_BRAND]?: unknown })[ERROR_BRAND] === "catalog";
  }
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

  static override isInstance(value: unknown): value is UnknownToolError {
    return CatalogError.isInstance(value) && value.code === "UNKNOWN_TOOL";
  }
}
