import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { guardPlugin } from "@codemux/hooks";
import { connect, filesystem, misbehaving, tempDir, textOf, type Harness } from "./harness";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe("guard", () => {
  it("asks the user through elicitation before a destructive tool, and runs it when they say yes", async () => {
    const root = tempDir();
    const asked: string[] = [];
    harness = await connect({
      servers: { fs: filesystem(root) },
      plugins: [guardPlugin()],
      elicit: (request) => {
        asked.push(request.message);
        return { action: "accept", content: { confirm: true } };
      },
    });
    const file = join(root, "a.txt");
    const result = await harness.call("fs__write_file", { path: file, content: "written" });
    expect(result.isError).toBeFalsy();
    expect(readFileSync(file, "utf8")).toBe("written");
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain("Allow fs__write_file to run? Its server marks it destructive.");
    expect(asked[0]).toContain('"content":"written"');
    await harness.call("fs__list_directory", { path: root });
    expect(asked).toHaveLength(1);
  });

  it.each([
    ["declines", { action: "decline" as const }],
    ["answers no", { action: "accept" as const, content: { confirm: false } }],
    ["cancels", { action: "cancel" as const }],
  ])("refuses, and does not run the tool, when the user %s", async (_what, answer) => {
    const root = tempDir();
    harness = await connect({ servers: { fs: filesystem(root) }, plugins: [guardPlugin()], elicit: () => answer });
    const file = join(root, "a.txt");
    const result = await harness.call("fs__write_file", { path: file, content: "written" });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^The user declined to run fs__write_file \(its server marks it destructive\); it was not called\./);
    expect(existsSync(file)).toBe(false);
  });

  it("refuses with a clear message when the client cannot ask the user", async () => {
    const root = tempDir();
    harness = await connect({ servers: { fs: filesystem(root) }, plugins: [guardPlugin()] });
    const result = await harness.call("fs__write_file", { path: join(root, "a.txt"), content: "x" });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/needs the user's confirmation .*cannot ask the user \(it does not support MCP elicitation\); it was not called/);
    expect(existsSync(join(root, "a.txt"))).toBe(false);
  });

  it("denies listed tools outright, asks for listed ones, and never asks for allowed ones", async () => {
    const root = tempDir();
    let asked = 0;
    harness = await connect({
      servers: { fs: filesystem(root), s: misbehaving() },
      plugins: [guardPlugin({ deny: ["s__crash"], confirm: ["s__echo"], allow: ["fs__write_file"] })],
      elicit: () => {
        asked++;
        return { action: "accept", content: { confirm: true } };
      },
    });
    const denied = await harness.call("s__crash", {});
    expect(textOf(denied)).toBe("s__crash is denied by the guard plugin (plugins.guard.deny in the config); it was not called.");
    expect(asked).toBe(0);
    expect(textOf(await harness.call("s__echo", { text: "hi" }))).toBe("hi");
    expect(asked).toBe(1);
    await harness.call("fs__write_file", { path: join(root, "b.txt"), content: "y" });
    expect(asked).toBe(1);
    expect(readFileSync(join(root, "b.txt"), "utf8")).toBe("y");
  });
});
