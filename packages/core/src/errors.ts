/** Marks every codemux error, whichever package and installed copy made it; the value names the package. */
export const ERROR_BRAND: unique symbol = Symbol.for("codemux.error");

export interface CodemuxErrorOptions {
  cause?: unknown;
  /** Facts a caller may branch on or show (a limit and its value, a server's name); never a secret. */
  data?: Record<string, unknown>;
}

/**
 * The base of every error a codemux package raises on purpose. Each package subclasses it once with
 * its own code union and `static readonly package` name; `code` is stable (UPPER_SNAKE), the message
 * a sentence a user can act on. `isInstance` checks the brand, so it holds across installed copies
 * of a package, where `instanceof` fails.
 *
 * @example
 * type PoolErrorCode = "SERVER_NOT_FOUND" | "CALL_TIMEOUT";
 * class PoolError extends CodemuxError<PoolErrorCode> {
 *   static override readonly package = "pool";
 * }
 * PoolError.isInstance(error); // a PoolError (or subclass) from any copy of the pool package
 * CodemuxError.isInstance(error); // any codemux error
 */
export class CodemuxError<Code extends string = string> extends Error {
  /** The package whose errors a subclass stands for; `isInstance` on that subclass matches it. */
  static readonly package: string = "";
  /** Set on a subclass that stands for one code of its package: `isInstance` then matches that code only. */
  static readonly forCode: string | undefined = undefined;
  readonly [ERROR_BRAND]: string;
  readonly code: Code;
  readonly data: Record<string, unknown> | undefined;

  constructor(code: Code, message: string, options: CodemuxErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this[ERROR_BRAND] = (new.target as typeof CodemuxError).package || "codemux";
    this.code = code;
    this.data = options.data;
  }

  /** True for an error of this class's package (any codemux error, on `CodemuxError` itself), from any installed copy. */
  static isInstance<T extends ErrorClass>(this: T, value: unknown): value is InstanceType<T> {
    if (typeof value !== "object" || value === null) return false;
    const brand = (value as { [ERROR_BRAND]?: unknown })[ERROR_BRAND];
    if (typeof brand !== "string") return false;
    const { package: wanted, forCode } = this as unknown as typeof CodemuxError;
    return (wanted === "" || brand === wanted) && (forCode === undefined || (value as { code?: unknown }).code === forCode);
  }
}

/** A codemux error class, as the `this` of `isInstance`. */
export type ErrorClass = abstract new (...args: never[]) => CodemuxError;

/** True for an error a codemux package raised on purpose: its message is meant for the user. */
export function isCodemuxError(value: unknown): value is CodemuxError {
  return CodemuxError.isInstance(value);
}
