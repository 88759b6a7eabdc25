import { describe, expect, it } from "vitest";
import { SpinPolicy } from "./spin.js";

describe("SpinPolicy", () => {
  it("polls only while the pool leaves a core to spare", () => {
    const policy = new SpinPolicy(300, 2);
    expect(policy.shouldSpin(1)).toBe(true);
    expect(policy.shouldSpin(2)).toBe(false);
    expect(new SpinPolicy(300, 4).shouldSpin(2)).toBe(true);
    expect(new SpinPolicy(300, 1).shouldSpin(1)).toBe(false);
    expect(new SpinPolicy(0, 8).shouldSpin(1)).toBe(false);
  });

  it("backs off exponentially after misses and resumes after a hit", () => {
    const policy = new SpinPolicy(300, 2);
    const pattern = (n: number) => Array.from({ length: n }, () => policy.shouldSpin(1));
    policy.miss();
    expect(pattern(2)).toEqual([false, true]);
    policy.miss();
    expect(pattern(4)).toEqual([false, false, false, true]);
    for (let i = 0; i < 10; i++) policy.miss();
    // Capped at 2^6 − 1 skipped waits.
    expect(pattern(64)).toEqual([...Array(63).fill(false), true]);
    policy.hit();
    expect(pattern(2)).toEqual([true, true]);
  });
});
