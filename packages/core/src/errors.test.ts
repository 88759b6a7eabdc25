import { describe, expect, it } from "vitest";
import { CodemuxError, ERROR_BRAND, isCodemuxError } from "./errors";

type ShelfCode = "EMPTY" | "FULL";
class ShelfError extends CodemuxError<ShelfCode> {
  static override readonly package = "shelf";
}
class ShelfEmptyError extends ShelfError {
  constructor(readonly shelf: string) {
    super("EMPTY", `Shelf ${shelf} is empty; put something on it first.`, { data: { shelf } });
  }
}
class LampError extends CodemuxError<"DARK"> {
  static override readonly package = "lamp";
}
class ShelfFullError extends ShelfError {
  static override readonly forCode = "FULL";
  constructor() {
    super("FULL", "The shelf is full; take something off first.");
  }
}

describe("CodemuxError", () => {
  it("carries a stable code, the data, the cause, its class name and the package's brand", () => {
    const cause = new Error("low level");
    const error = new ShelfError("FULL", "The shelf is full.", { cause, data: { limit: 3 } });
    expect(error).toMatchObject({ name: "ShelfError", code: "FULL", message: "The shelf is full.", data: { limit: 3 }, cause });
    expect(error[ERROR_BRAND]).toBe("shelf");
    expect(new ShelfEmptyError("a")[ERROR_BRAND]).toBe("shelf");
  });

  it("tells a package's errors apart by brand, also for a copy made by another installed package (a plain object with the brand)", () => {
    const copy = Object.assign(new Error("from another copy"), { [Symbol.for("codemux.error")]: "shelf", code: "EMPTY" });
    expect(ShelfError.isInstance(copy)).toBe(true);
    expect(ShelfError.isInstance(new LampError("DARK", "dark"))).toBe(false);
    expect(LampError.isInstance(new LampError("DARK", "dark"))).toBe(true);
    expect(CodemuxError.isInstance(copy)).toBe(true);
    expect(isCodemuxError(new LampError("DARK", "dark"))).toBe(true);
  });

  it("matches one code of a package on a subclass that stands for it", () => {
    expect(ShelfFullError.isInstance(new ShelfFullError())).toBe(true);
    expect(ShelfFullError.isInstance(new ShelfError("FULL", "full, from another copy of the class"))).toBe(true);
    expect(ShelfFullError.isInstance(new ShelfEmptyError("a"))).toBe(false);
    expect(ShelfError.isInstance(new ShelfFullError())).toBe(true);
  });

  it("is not fooled by errors without the brand, or with a brand that is not a package name", () => {
    expect(isCodemuxError(new Error("plain"))).toBe(false);
    expect(isCodemuxError({ [Symbol.for("codemux.error")]: 1 })).toBe(false);
    expect(isCodemuxError(null)).toBe(false);
    expect(isCodemuxError("EMPTY")).toBe(false);
  });
});
