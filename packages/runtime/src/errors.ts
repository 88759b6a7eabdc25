import { CodemuxError } from "@codemux/core";

export type RuntimeErrorCode = "SETTING_INVALID" | "STORE_UNREACHABLE" | "ROOT_TOO_BROAD";

/** A start the user can fix: a setting or variable out of range, a store that does not answer, a root too broad to serve. */
export class RuntimeError extends CodemuxError<RuntimeErrorCode> {
  static override readonly package = "runtime";
}
