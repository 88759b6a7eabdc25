import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { atTurnEnd } from "./turn";

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe("atTurnEnd", () => {
  it("runs the turn's downstream work before its client work, whatever order they came in, after the turn's promises", async () => {
    const order: string[] = [];
    atTurnEnd(() => order.push("202"), "client");
    void Promise.resolve().then(() => atTurnEnd(() => order.push("write")));
    atTurnEnd(() => order.push("second 202"), "client");
    expect(order).toEqual([]);
    await turn();
    expect(order).toEqual(["write", "202", "second 202"]);
  });

  it("leaves work added while the turn's work runs to the next turn", async () => {
    const order: string[] = [];
    atTurnEnd(() => {
      order.push("first");
      atTurnEnd(() => order.push("next turn"));
    });
    await turn();
    expect(order).toEqual(["first"]);
    await turn();
    expect(order).toEqual(["first", "next turn"]);
  });

  it("still runs the rest of the turn's work when one throws, then throws its error", () => {
    const script = `
      import { atTurnEnd } from ${JSON.stringify(fileURLToPath(new URL("./turn.ts", import.meta.url)))};
      process.on("uncaughtException", (error) => console.log("thrown:", error.message));
      atTurnEnd(() => { throw new Error("boom"); });
      atTurnEnd(() => console.log("downstream ran"));
      atTurnEnd(() => console.log("client ran"), "client");`;
    const run = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { encoding: "utf8", timeout: 20_000 });
    expect(run.stdout.trim().split("\n")).toEqual(["downstream ran", "client ran", "thrown: boom"]);
  });
});
