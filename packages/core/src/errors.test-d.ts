import { describe, expectTypeOf, it } from "vitest";
import { CodemuxError, isCodemuxError } from "./errors";

type QuotaErrorCode = "OVER_QUOTA" | "NO_PLAN";
class QuotaError extends CodemuxError<QuotaErrorCode> {
  static override readonly package = "quota";
}
class OverQuotaError extends QuotaError {
  static override readonly forCode = "OVER_QUOTA";
}

describe("CodemuxError.isInstance", () => {
  it("narrows to the class it is called on, with that class's code union", () => {
    const value: unknown = new QuotaError("OVER_QUOTA", "over");
    if (QuotaError.isInstance(value)) {
      expectTypeOf(value).toEqualTypeOf<QuotaError>();
      expectTypeOf(value.code).toEqualTypeOf<QuotaErrorCode>();
    }
    if (OverQuotaError.isInstance(value)) expectTypeOf(value).toEqualTypeOf<OverQuotaError>();
    if (CodemuxError.isInstance(value)) {
      expectTypeOf(value).toEqualTypeOf<CodemuxError<string>>();
      expectTypeOf(value.code).toBeString();
    }
    if (isCodemuxError(value)) expectTypeOf(value).toEqualTypeOf<CodemuxError<string>>();
  });

  it("takes only the codes of the class's union", () => {
    new QuotaError("NO_PLAN", "none");
    // @ts-expect-error: not a QuotaErrorCode
    new QuotaError("SERVER_NOT_FOUND", "no");
    expectTypeOf(QuotaError.isInstance).parameter(0).toBeUnknown();
  });
});
