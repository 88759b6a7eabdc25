import { describe, expect, it } from "vitest";
import { BundleGate } from "./bundle-gate.js";

describe("BundleGate", () => {
  it("admits up to its capacity, then makes the rest wait their turn", async () => {
    const gate = new BundleGate(2);
    const order: string[] = [];
    const first = await gate.enter(false);
    const second = await gate.enter(false);
    const third = gate.enter(false).then((leave) => {
      order.push("third");
      return leave;
    });
    await Promise.resolve();
    expect(order).toEqual([]);
    first();
    (await third)();
    second();
    expect(order).toEqual(["third"]);
  });

  it("admits a holder alone only when the gate is empty, and nobody beside it", async () => {
    const gate = new BundleGate(2);
    const order: string[] = [];
    const shared = await gate.enter(false);
    const alone = gate.enter(true).then((leave) => {
      order.push("alone");
      return leave;
    });
    const later = gate.enter(false).then((leave) => {
      order.push("later");
      return leave;
    });
    await Promise.resolve();
    expect(order).toEqual([]);
    shared();
    const leaveAlone = await alone;
    await Promise.resolve();
    expect(order).toEqual(["alone"]);
    leaveAlone();
    (await later)();
    expect(order).toEqual(["alone", "later"]);
  });
});
