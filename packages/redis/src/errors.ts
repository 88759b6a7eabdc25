import { CodemuxError, SHARED_STATE_DOWN } from "@codemux/core";

export type RedisErrorCode = typeof SHARED_STATE_DOWN | "REDIS_FORMAT" | "REDIS_BAD_URL";

/** Base of every error @codemux/redis raises; `code` is stable for callers to branch on. */
export class RedisStateError extends CodemuxError<RedisErrorCode> {
  static override readonly package = "redis";
}

/** Redis did not answer (down, unreachable, too slow, refused the command): a call that needs shared state cannot go on. */
export class RedisUnavailableError extends RedisStateError {
  // The code core's isSharedStateDown knows: packages that do not import this one go on without Redis by it.
  static override readonly forCode = SHARED_STATE_DOWN;
  constructor(where: string, what: string, cause: unknown) {
    const reason = (cause as { code?: string })?.code ?? (cause instanceof Error ? cause.message : String(cause));
    super(
      SHARED_STATE_DOWN,
      `codemux could not ${what}: Redis at ${where} did not answer (${reason.slice(0, 200)}). Calls that need no shared state still work; codemux reconnects by itself, so retry once Redis is back.`,
      { cause },
    );
  }
}

/** An entry of a format this codemux does not read: written by another version during a rolling deploy. */
export class StoreFormatError extends RedisStateError {
  static override readonly forCode = "REDIS_FORMAT";
  constructor(key: string, found: string, known: number) {
    super(
      "REDIS_FORMAT",
      `Redis holds ${key} in format ${found.slice(0, 20) || "(none)"}, which this codemux (format ${known}) does not read; it was written by another codemux version. Run the same version on every instance, or give this one its own --store-prefix.`,
    );
  }
}

/** The store setting is not a Redis URL codemux can use. */
export class RedisUrlError extends RedisStateError {
  static override readonly forCode = "REDIS_BAD_URL";
  constructor(message: string) {
    super("REDIS_BAD_URL", message);
  }
}
