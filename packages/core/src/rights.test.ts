import { describe, expect, it } from "vitest";
import { ADMIN_SCOPE, METRICS_SCOPE, hasScope } from "./rights";

describe("hasScope", () => {
  it("grants every right where no scopes are in force, and exactly the listed ones otherwise", () => {
    expect(hasScope({}, ADMIN_SCOPE)).toBe(true);
    expect(hasScope({ scopes: [METRICS_SCOPE] }, METRICS_SCOPE)).toBe(true);
    expect(hasScope({ scopes: [METRICS_SCOPE] }, ADMIN_SCOPE)).toBe(false);
    expect(hasScope({ scopes: [] }, METRICS_SCOPE)).toBe(false);
  });
});
