import { SANDBOX_GLOBALS, Sandbox } from "@codemux/sandbox";
import { afterAll, describe, expect, it } from "vitest";

// Issue 10 item 8: the standard globals a snippet author expects, bounded like the rest.

const sandbox = new Sandbox({ workers: 1 });
afterAll(() => sandbox.close());

async function value(code: string, timeoutMs = 10_000): Promise<unknown> {
  const result = await sandbox.execute({ code, timeoutMs });
  if (!result.ok) throw new Error(`${result.error?.kind}: ${result.error?.message}`);
  return result.result;
}

describe("standard globals in the sandbox", () => {
  it("defines every name in SANDBOX_GLOBALS", async () => {
    const types = await value(`export default ${JSON.stringify(SANDBOX_GLOBALS)}.map((name) => typeof (globalThis as any)[name]);`);
    expect(types).toEqual(SANDBOX_GLOBALS.map((name) => (name === "console" ? "object" : "function")));
  });

  it("parses and resolves URLs and edits their search params", async () => {
    const result = await value(`
      const u = new URL("HTTPS://User:pw@Example.com:443/a/b/../c?x=1&y=two+words#frag");
      const rel = new URL("../d?q=1", "https://example.com/a/b/c");
      u.searchParams.set("x", "é &");
      u.searchParams.append("z", "3");
      const p = new URLSearchParams({ a: "1", b: "x y" });
      export default {
        href: u.href, origin: u.origin, host: u.host, pathname: u.pathname, hash: u.hash, y: u.searchParams.get("y"),
        rel: rel.href, params: p.toString(), entries: [...new URLSearchParams("a=1&a=2&b").entries()],
        invalid: URL.canParse("not a url"), port: new URL("http://h:8080/").port, file: new URL("file:///tmp/x").href,
      };`);
    expect(result).toEqual({
      href: "https://User:pw@example.com/a/c?x=%C3%A9+%26&y=two+words&z=3#frag",
      origin: "https://example.com",
      host: "example.com",
      pathname: "/a/c",
      hash: "#frag",
      y: "two words",
      rel: "https://example.com/a/d?q=1",
      params: "a=1&b=x+y",
      entries: [
        ["a", "1"],
        ["a", "2"],
        ["b", ""],
      ],
      invalid: false,
      port: "8080",
      file: "file:///tmp/x",
    });
  });

  it("encodes and decodes UTF-8, base64 and clones structures", async () => {
    const result = await value(`
      const bytes = new TextEncoder().encode("héllo 🌍");
      const text = new TextDecoder().decode(bytes);
      const original = { when: new Date(0), tags: new Set(["a"]), map: new Map([[1, { deep: [1, 2] }]]) };
      (original as any).self = original;
      const copy = structuredClone(original);
      let refused = "";
      try { structuredClone({ f() {} }); } catch (e) { refused = (e as Error).name; }
      export default {
        bytes: Array.from(bytes), text, b64: btoa("hello"), plain: atob("aGVsbG8="),
        cloned: copy !== original && copy.self === copy && copy.when.getTime() === 0 && copy.map.get(1).deep[1] === 2 && copy.tags.has("a"),
        refused,
      };`);
    expect(result).toEqual({
      bytes: [...Buffer.from("héllo 🌍")],
      text: "héllo 🌍",
      b64: "aGVsbG8=",
      plain: "hello",
      cloned: true,
      refused: "DataCloneError",
    });
  });

  it("runs queueMicrotask before timers, and setInterval until cleared", async () => {
    const result = await value(`
      const order: string[] = [];
      setTimeout(() => order.push("timeout"), 0);
      queueMicrotask(() => order.push("microtask"));
      let ticks = 0;
      await new Promise<void>((resolve) => {
        const id = setInterval(() => { ticks++; if (ticks === 3) { clearInterval(id); resolve(); } }, 5);
      });
      await new Promise((resolve) => setTimeout(resolve, 30));
      export default { order, ticks };`);
    expect(result).toEqual({ order: ["microtask", "timeout"], ticks: 3 });
  });

  it("ends a run whose interval is still active, and fails one whose microtask throws", async () => {
    expect(await value("setInterval(() => {}, 1);\nexport default 'done';")).toBe("done");
    const failed = await sandbox.execute({
      code: "queueMicrotask(() => { throw new RangeError('in a microtask'); });\nawait new Promise((r) => setTimeout(r, 10));",
    });
    expect(failed.error).toMatchObject({ kind: "runtime" });
    expect(failed.error?.message).toContain("RangeError: in a microtask");
  });

  it("decodes a large base64 string in linear time", async () => {
    const result = await value("const big = btoa('x'.repeat(3_000_000));\nexport default atob(big).length;", 30_000);
    expect(result).toBe(3_000_000);
  }, 40_000);
});
