import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { readmeExample } from "../../../scripts/lib/readme-examples.mjs";

const packageDir = fileURLToPath(new URL("..", import.meta.url));

describe("README example", () => {
  afterEach(() => vi.restoreAllMocks());

  it("is the code of examples/weather.ts", () => {
    const { readme, file } = readmeExample(packageDir, "examples/weather.ts");
    expect(readme).toBe(file);
  });

  it("runs: three host calls in flight, the filtered cities as the result, the guest's console as stdout", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    await import("../examples/weather");
    const [run] = log.mock.calls.map(([value]) => value);
    expect(run).toMatchObject({ ok: true, result: ["Oslo", "Lima", "Pune"], stdout: "fetched 3\n", calls: 3 });
  });
});
