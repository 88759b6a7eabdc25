import { CodemuxError } from "@codemux/core";

export type HooksErrorCode = "REFUSED" | "RATE_LIMITED" | "NOT_CONFIRMED" | "QUARANTINED" | "PLUGIN_FAILED" | "PIN_FILE" | "CONFIG_INVALID" | "CANNOT_WRAP";

/**
 * Base of every error @codemux/hooks raises; `code` is stable for callers to branch on (a REST
 * front end maps RATE_LIMITED to 429 with `data.retryAfterMs`, REFUSED / NOT_CONFIRMED / QUARANTINED to 403).
 */
export class HooksError extends CodemuxError<HooksErrorCode> {
  static override readonly package = "hooks";
}

/** A plugin refused the call (`{ action: "abort" }`); the downstream tool was not called. */
export class PluginRefusedError extends HooksError {
  constructor(
    readonly plugin: string,
    reason: string,
    options: { code?: "REFUSED" | "NOT_CONFIRMED" | "QUARANTINED"; data?: Record<string, unknown> } = {},
  ) {
    super(options.code ?? "REFUSED", reason, { data: { plugin, ...options.data } });
  }
}

/** Too many calls for one of the rate-limit plugin's buckets; `retryAfterMs` says when one more will pass. */
export class RateLimitedError extends HooksError {
  constructor(
    message: string,
    readonly retryAfterMs: number,
    data: Record<string, unknown> = {},
  ) {
    super("RATE_LIMITED", message, { data: { plugin: "rate-limit", retryAfterMs, ...data } });
  }
}

/** A fail-closed plugin threw, timed out or answered nonsense; the call is stopped rather than let through unchecked. */
export class PluginFailedError extends HooksError {
  constructor(
    readonly plugin: string,
    hook: string,
    reason: string,
    options: { cause?: unknown; after?: boolean } = {},
  ) {
    super(
      "PLUGIN_FAILED",
      options.after
        ? `Plugin "${plugin}" failed after the call (${hook}: ${reason}), and it is fail-closed, so the result is withheld. Check codemux's log for the plugin's error.`
        : `Plugin "${plugin}" failed (${hook}: ${reason}), and it is fail-closed, so the call was not made. Check codemux's log for the plugin's error, or fix or remove the plugin in the config.`,
      { cause: options.cause, data: { plugin, hook } },
    );
  }
}

/** The pin file could not be read or written. */
export class PinFileError extends HooksError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super("PIN_FILE", message, options);
  }
}

/** The config's `plugins` section is wrong; the message names the file and the field. */
export class PluginConfigError extends HooksError {
  static override readonly forCode = "CONFIG_INVALID";
  readonly file: string;

  constructor(message: string, options: { file: string; cause?: unknown }) {
    super("CONFIG_INVALID", message, { cause: options.cause, data: { file: options.file } });
    this.file = options.file;
  }
}

/** `wrapWithProxy` cannot wrap this server: it is wrapped already, or its SDK keeps its request handlers where the wrapper cannot reach them. */
export class CannotWrapError extends HooksError {
  static override readonly forCode = "CANNOT_WRAP";

  constructor(message: string) {
    super("CANNOT_WRAP", message);
  }
}
