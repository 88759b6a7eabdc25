import { Sandbox, SandboxError, SandboxOptionsError } from "@codemux/sandbox";
import { afterAll, describe, expect, it } from "vitest";

const sandbox = new Sandbox({ workers: 2 });
afterAll(() => sandbox.close());

describe("Sandbox.execute: results and output", () => {
  it("returns the default export as JSON", async () => {
    const run = await sandbox.execute({ code: "export default { sum: 1 + 1, list: [1, 'a', null] };" });
    expect(run).toMatchObject({ ok: true, result: { sum: 2, list: [1, "a", null] }, calls: 0 });
    expect(run.durationMs).toBeGreaterThan(0);
  });

  it("leaves result out when there is no default export", async () => {
    const run = await sandbox.execute({ code: "const x = 1;" });
    expect(run.ok).toBe(true);
    expect("result" in run).toBe(false);
  });

  it("captures console output on stdout and stderr, formatted like Node", async () => {
    const run = await sandbox.execute({
      code: [
        "console.log('plain', 42);",
        "console.info({ a: 1, b: 'two', 'c-d': [1, { e: null }] });",
        "console.debug(new Map([[1, 'x']]), new Set([1]), undefined, () => 1);",
        "console.warn('careful');",
        "console.error(new TypeError('bad'));",
      ].join("\n"),
    });
    expect(run.stdout).toBe("plain 42\n{ a: 1, b: 'two', 'c-d': [ 1, { e: null } ] }\nMap(1) { 1 => 'x' } Set(1) { 1 } undefined [Function: (anonymous)]\n");
    expect(run.stderr).toBe("careful\nTypeError: bad\n");
    expect(run.stdoutTruncated).toBe(false);
  });

  it("strips TypeScript types, interfaces and generics", async () => {
    const code = [
      "interface Point { x: number; y: number }",
      "type Pair<T> = [T, T];",
      "function swap<T>(pair: Pair<T>): Pair<T> { return [pair[1], pair[0]]; }",
      "enum Color { Red = 'red' }",
      "const p: Point = { x: 1, y: 2 } satisfies Point;",
      "export default { swapped: swap<number>([p.x, p.y]), color: Color.Red };",
    ].join("\n");
    expect(await sandbox.execute({ code })).toMatchObject({ ok: true, result: { swapped: [2, 1], color: "red" } });
  });

  it("supports top-level await and awaits a promised default export", async () => {
    const code = "const a = await Promise.resolve(20);\nexport default Promise.resolve(a + 22);";
    expect(await sandbox.execute({ code })).toMatchObject({ ok: true, result: 42 });
  });

  it("runs bounded timers", async () => {
    const code = [
      "const order: string[] = [];",
      "const cancelled = setTimeout(() => order.push('never'), 5);",
      "clearTimeout(cancelled);",
      "await new Promise((resolve) => setTimeout(() => { order.push('late'); resolve(null); }, 30));",
      "setTimeout(() => order.push('after'), 0);",
      "await new Promise((resolve) => setTimeout(resolve, 10));",
      "export default order;",
    ].join("\n");
    expect(await sandbox.execute({ code })).toMatchObject({ ok: true, result: ["late", "after"] });
  });

  it("refuses a default export with no JSON form", async () => {
    const bigint = await sandbox.execute({ code: "export default 10n;" });
    expect(bigint.error).toMatchObject({ kind: "result" });
    const fn = await sandbox.execute({ code: "export default function f() {}" });
    expect(fn.error).toMatchObject({ kind: "result" });
    const circular = await sandbox.execute({ code: "const a: any = {}; a.self = a; export default a;" });
    expect(circular.error).toMatchObject({ kind: "result" });
  });

  it("refuses a result over maxResultBytes", async () => {
    const small = new Sandbox({ workers: 1, maxResultBytes: 1000 });
    try {
      const run = await small.execute({ code: "export default 'x'.repeat(2000);" });
      expect(run.error).toMatchObject({ kind: "result" });
      expect(await small.execute({ code: "export default 'x'.repeat(10);" })).toMatchObject({ ok: true, result: "xxxxxxxxxx" });
    } finally {
      await small.close();
    }
  });
});

describe("Sandbox.execute: errors at the place they were written", () => {
  it("reports a throw on line 7 at line 7, through TypeScript stripping", async () => {
    const code = [
      "interface Input { n: number }",
      "type Output = string;",
      "const input: Input = { n: 1 };",
      "function check(value: Input): Output {",
      "  return String(value.n);",
      "}",
      "const out: Output = check(input); throw new Error(`boom ${out}`);",
      "export default out;",
    ].join("\n");
    const run = await sandbox.execute({ code });
    expect(run.ok).toBe(false);
    expect(run.error).toMatchObject({ kind: "runtime", line: 7 });
    expect(run.error?.message).toMatch(/^snippet\.ts:7:\d+: Error: boom 1$/);
    expect(run.error?.column).toBeGreaterThan(30);
    expect(run.error?.stack).toContain("snippet.ts:7:");
  });

  it("names a custom filename and the failing frame in a virtual module", async () => {
    const modules = (specifier: string) =>
      specifier === "mcp/lib.ts" ? "\nexport function fail(): never {\n  throw new RangeError('from lib');\n}" : undefined;
    const code = "import { fail } from 'mcp/lib.ts';\n\nfail();";
    const run = await sandbox.execute({ code, filename: "task.ts", modules });
    expect(run.error).toMatchObject({ kind: "runtime", line: 3 });
    expect(run.error?.message).toMatch(/^task\.ts:3:\d+: RangeError: from lib \(thrown at mcp\/lib\.ts:3:\d+\)$/);
  });

  it("reports a syntax error with its line and column", async () => {
    const run = await sandbox.execute({ code: "const ok = 1;\n\nconst broken = (;\n" });
    expect(run.error).toMatchObject({ kind: "syntax", line: 3, column: 17 });
    expect(run.error?.message).toMatch(/^snippet\.ts:3:17: /);
  });

  it("reports an error thrown after an await", async () => {
    const run = await sandbox.execute({ code: "await Promise.resolve();\nconst o: any = null;\no.field;" });
    expect(run.error).toMatchObject({ kind: "runtime", line: 3 });
    expect(run.error?.message).toMatch(/TypeError/);
  });

  it("reports a thrown non-Error value", async () => {
    const run = await sandbox.execute({ code: "throw 'plain string';" });
    expect(run.error).toMatchObject({ kind: "runtime" });
    expect(run.error?.message).toContain("plain string");
  });
});

describe("Sandbox.execute: imports", () => {
  const files: Record<string, string> = {
    "mcp/github/index.ts": 'export { listIssues } from "./issues.ts";\nexport type { Issue } from "./types.ts";',
    "mcp/github/issues.ts":
      'import { call } from "../bridge.ts";\nimport type { Issue } from "./types.ts";\nexport const listIssues = (repo: string): Promise<Issue[]> => call("github__list_issues", { repo }) as Promise<Issue[]>;',
    "mcp/github/types.ts": "export interface Issue { title: string }",
    "mcp/bridge.ts":
      "export const call = (name: string, args: unknown): Promise<unknown> => __host_call(name, args);\ndeclare global { function __host_call(name: string, args: unknown): Promise<unknown>; }",
  };
  const modules = (specifier: string) => files[specifier];

  it("imports virtual modules, with relative imports between them", async () => {
    const code =
      'import { listIssues, type Issue } from "mcp/github/index.ts";\nconst issues: Issue[] = await listIssues("a/b");\nexport default issues.map((i) => i.title);';
    const run = await sandbox.execute({
      code,
      modules,
      onCall: async (name, args) => [{ title: `${name} ${JSON.stringify(args)}` }],
    });
    expect(run).toMatchObject({ ok: true, result: ['github__list_issues {"repo":"a/b"}'], calls: 1 });
  });

  it("refuses a module the resolver does not know, naming it and its line", async () => {
    const run = await sandbox.execute({ code: '// first\nimport { x } from "mcp/unknown.ts";\nexport default x;', modules });
    expect(run.error).toMatchObject({ kind: "import", line: 2 });
    expect(run.error?.message).toContain('"mcp/unknown.ts"');
  });
});

describe("Sandbox.execute: host calls", () => {
  it("forwards __host_call to onCall and counts calls", async () => {
    const seen: Array<[string, unknown]> = [];
    const run = await sandbox.execute({
      code: "const a = await __host_call('double', { n: 2 });\nconst b = await __host_call('double', { n: a });\nexport default b;",
      onCall: async (name, args) => {
        seen.push([name, args]);
        return (args as { n: number }).n * 2;
      },
    });
    expect(run).toMatchObject({ ok: true, result: 8, calls: 2 });
    expect(seen).toEqual([
      ["double", { n: 2 }],
      ["double", { n: 4 }],
    ]);
  });

  it("turns a rejected onCall into a rejected promise carrying the message", async () => {
    const run = await sandbox.execute({
      code: "try { await __host_call('x', {}); } catch (e) { console.log('caught:', (e as Error).message); }\nexport default 'survived';",
      onCall: async () => {
        throw new Error("downstream is down");
      },
    });
    expect(run).toMatchObject({ ok: true, result: "survived", stdout: "caught: downstream is down\n", calls: 1 });
  });

  it("rejects calls when no onCall is given", async () => {
    const run = await sandbox.execute({ code: "await __host_call('x', {});" });
    expect(run.error).toMatchObject({ kind: "runtime" });
    expect(run.error?.message).toContain("No host functions are available");
  });

  it("issues calls awaited together at once", async () => {
    const windows: Array<{ start: number; end: number }> = [];
    const run = await sandbox.execute({
      code: "const all = await Promise.all(Array.from({ length: 10 }, (_, i) => __host_call('slow', i)));\nexport default all;",
      onCall: async (_name, args) => {
        const start = Date.now();
        await new Promise((resolve) => setTimeout(resolve, 400));
        windows.push({ start, end: Date.now() });
        return args;
      },
    });
    expect(run).toMatchObject({ ok: true, result: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], calls: 10 });
    const lastStart = Math.max(...windows.map((w) => w.start));
    const firstEnd = Math.min(...windows.map((w) => w.end));
    expect(lastStart).toBeLessThan(firstEnd);
  });

  it("aborts the signal of in-flight calls when the caller cancels", async () => {
    const controller = new AbortController();
    let callSignal: AbortSignal | undefined;
    const pending = sandbox.execute({
      code: "await __host_call('forever', null);",
      signal: controller.signal,
      onCall: (_name, _args, { signal }) => {
        callSignal = signal;
        setTimeout(() => controller.abort(), 20);
        return new Promise(() => undefined);
      },
    });
    const run = await pending;
    expect(run.error).toMatchObject({ kind: "aborted" });
    expect(callSignal?.aborted).toBe(true);
  });
});

describe("Sandbox limits", () => {
  it("returns queue_full beyond workers + maxQueue", async () => {
    const tiny = new Sandbox({ workers: 1, maxQueue: 1 });
    try {
      const slow = "await new Promise((resolve) => setTimeout(resolve, 300)); export default 'done';";
      const runs = await Promise.all([tiny.execute({ code: slow }), tiny.execute({ code: slow }), tiny.execute({ code: slow })]);
      expect(runs.map((run) => run.ok)).toEqual([true, true, false]);
      expect(runs[2]?.error).toMatchObject({ kind: "queue_full" });
      expect(await tiny.execute({ code: "export default 1" })).toMatchObject({ ok: true, result: 1 });
    } finally {
      await tiny.close();
    }
  });

  it("caps timeoutMs at hardTimeoutMs", async () => {
    const strict = new Sandbox({ workers: 1, hardTimeoutMs: 200 });
    try {
      const run = await strict.execute({ code: "while (true) {}", timeoutMs: 60_000 });
      expect(run.error).toMatchObject({ kind: "timeout" });
      expect(run.error?.message).toContain("200 ms");
    } finally {
      await strict.close();
    }
  });

  it("cancels a queued run without running it", async () => {
    const tiny = new Sandbox({ workers: 1 });
    try {
      const controller = new AbortController();
      const busy = tiny.execute({ code: "await new Promise((r) => setTimeout(r, 200));" });
      const queued = tiny.execute({ code: "console.log('ran');", signal: controller.signal });
      controller.abort();
      expect(await queued).toMatchObject({ ok: false, stdout: "", error: { kind: "aborted" } });
      expect((await busy).ok).toBe(true);
    } finally {
      await tiny.close();
    }
  });

  it("throws on bad options in the constructor, with a branded error", () => {
    let thrown: unknown;
    try {
      new Sandbox({ workers: 0 });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(SandboxOptionsError);
    expect(String(thrown)).toMatch(/workers must be a positive integer/);
    expect(SandboxError.isInstance(thrown)).toBe(true);
    expect((thrown as Record<symbol, unknown>)[Symbol.for("codemux.error")]).toBe("sandbox");
    expect(SandboxError.isInstance(new Error("plain"))).toBe(false);
  });

  it("never throws from execute: a closed sandbox and a malformed request are ok: false results", async () => {
    const closed = new Sandbox({ workers: 1 });
    await closed.close();
    expect(await closed.execute({ code: "export default 1" })).toMatchObject({ ok: false, error: { kind: "closed" } });
    for (const timeoutMs of [0, -5, Number.NaN]) {
      expect(await sandbox.execute({ code: "export default 1", timeoutMs })).toMatchObject({ ok: false, error: { kind: "invalid_request" } });
    }
    const notCode = await sandbox.execute({ code: 42 as unknown as string });
    expect(notCode).toMatchObject({ ok: false, error: { kind: "invalid_request" } });
  });
});
