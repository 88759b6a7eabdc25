import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { config, connect, misbehaving, textOf, type Harness } from "./helpers";

let h: Harness;
beforeAll(async () => {
  h = await connect({ config: config({ m: misbehaving() }), mode: "passthrough", largeResultBytes: 10_000 });
  await h.core.ready();
});
afterAll(async () => {
  await h.close();
});

describe("passthrough mode", () => {
  it("lists every downstream tool under its server__tool name, and read_result", async () => {
    const names = (await h.client.listTools()).tools.map((t) => t.name);
    expect(names).toContain("m__echo");
    expect(names).toContain("read_result");
    expect(names).not.toContain("execute_code");
  });

  it("keeps a large result behind a handle that read_result can read back", async () => {
    const preview = textOf(await h.call("m__huge", { bytes: 50_000, lines: true }));
    const handle = /kept as "(res_[0-9a-f]+)"/.exec(preview)?.[1];
    expect(handle).toBeDefined();
    expect(await h.text("read_result", { handle, op: "tail", lines: 1 })).toMatch(/^\d+: line \d+: x{60}$/);
    expect(JSON.parse(await h.text("read_result", { handle })).lines).toBeGreaterThan(500);
  });

  it("answers a downstream tool's errors and bad arguments as error results", async () => {
    expect(await h.call("m__fail", { message: "nope" })).toMatchObject({ isError: true, content: [{ text: "nope" }] });
    const bad = await h.call("m__echo", { text: 1 });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toBe("Invalid arguments for m__echo: text: must be string");
  });
});
