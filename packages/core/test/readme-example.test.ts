import { fileURLToPath } from "node:url";
import { inspect } from "node:util";
import { afterEach, describe, expect, it, vi } from "vitest";
import { readmeExample } from "../../../scripts/lib/readme-examples.mjs";
import type { CallContext } from "../src/index";

const packageDir = fileURLToPath(new URL("..", import.meta.url));

describe("README example", () => {
  afterEach(() => vi.restoreAllMocks());

  it("is the code of examples/middleware.ts", () => {
    const { readme, file } = readmeExample(packageDir, "examples/middleware.ts");
    expect(readme).toBe(file);
  });

  it("runs: the third call of a principal is refused with the package's own error, and arguments are logged masked", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const { quota } = await import("../examples/middleware");
    expect(log.mock.calls).toEqual([[true, true, "OVER_QUOTA"]]);
    const ctx = {
      entry: { qualifiedName: "gh__search" },
      session: { id: "s1", principal: "ana" },
      arguments: { q: "x", url: "https://api.dev/?token=t0ps3cret" },
    } as unknown as CallContext;
    const next = async () => ({ content: [{ type: "text" as const, text: "ok" }] });
    await quota(ctx, next);
    await quota(ctx, next);
    await expect(quota(ctx, next)).rejects.toMatchObject({ code: "OVER_QUOTA", message: "ana used its 2 calls; ask an admin for more." });
    expect(log.mock.calls.slice(1).map(([line]) => line)).toEqual([
      'quota info: ana calls gh__search {"q":"x","url":"https://api.dev/?token=***"}',
      'quota info: ana calls gh__search {"q":"x","url":"https://api.dev/?token=***"}',
    ]);
  });

  it("is the code of examples/scan.ts, and prints what the README shows", () => {
    const { readme, file, output } = readmeExample(packageDir, "examples/scan.ts");
    expect(readme).toBe(file);
    expect(output).toBeDefined();
  });

  it("runs the scan: a poisoned tool and a shadowing one held back, their findings listed, hidden characters removed", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    await import("../examples/scan");
    const printed = log.mock.calls.map((args) => args.map((a) => (typeof a === "string" ? a : inspect(a))).join(" "));
    expect(`${printed.join("\n")}\n`).toBe(readmeExample(packageDir, "examples/scan.ts").output);
    expect(log.mock.calls[0]).toEqual(["critical", { add: "critical", today: "critical", quote: "clean" }]);
    expect(log.mock.calls.at(-1)).toEqual([JSON.stringify("Today's date.")]);
  });
});
