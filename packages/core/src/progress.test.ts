import { describe, expect, it } from "vitest";
import { redactSecrets } from "./mask";
import { callLine, oneLine } from "./progress";

describe("callLine", () => {
  it("names the tool and up to three key parameters in seed 001's order, each on one line and cut to 80 characters", () => {
    expect(callLine("fs__read_text_file", { head: 5, path: "logs/app.log" })).toBe("fs__read_text_file path=logs/app.log");
    const line = callLine("web__fetch", { id: 7, name: "n", query: "q\n\tq", url: "https://example.com/", path: "p" });
    expect(line).toBe("web__fetch path=p url=https://example.com/ query=q q");
    const long = callLine("kb__search", { query: "word ".repeat(100) });
    expect(long.slice("kb__search query=".length)).toHaveLength(80);
    expect(long.endsWith("…")).toBe(true);
    expect(callLine("x__y", { path: { nested: true }, prompt: null })).toBe("x__y");
    expect(callLine("x__y", "not an object")).toBe("x__y");
  });

  it("masks a whole value before cutting it, so a secret at the cut is not shown in part", () => {
    const query = `${"a".repeat(70)} ghp_${"b".repeat(36)}`;
    const line = callLine("gh__search", { query }, redactSecrets);
    expect(line).not.toContain("ghp_");
    expect(line).not.toContain("bbb");
  });

  it("reads only the arguments' own keys, and a huge value only as far as it can show", () => {
    const args = Object.create({ path: "inherited" }) as Record<string, unknown>;
    expect(callLine("x__y", args)).toBe("x__y");
    expect(oneLine(`${"x".repeat(10)}${" ".repeat(10_000_000)}tail`, 80)).toBe("xxxxxxxxxx");
  });
});
