import type { ExecuteResult } from "@codemux/sandbox";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { executionBody, executionResult, MemoryStore } from "../src/index";
import { executionJson } from "../src/render/text";
import { config, connect, textOf, type Harness, servicesOf } from "./helpers";

// Issue 43 item 11: a snippet's small value that expands (one array referenced two million times) must not be parsed and
// written again on the host's event loop, where every other client waits for it.
let h: Harness;
beforeAll(async () => {
  h = await connect({ config: config({}), largeResultBytes: 64 * 1024, resultStore: new MemoryStore() });
});
afterAll(() => h?.close());

describe("a snippet value that expands", () => {
  it("is answered from the JSON the sandbox wrote: the host parses no large text on its event loop", async () => {
    const parse = vi.spyOn(JSON, "parse");
    const stringify = vi.spyOn(JSON, "stringify");
    const keep = vi.spyOn(servicesOf(h.core).results, "keep");
    try {
      const code = 'const one = [["a", 1]]; export default Array.from({ length: 400000 }, () => one);';
      const result = await h.call("execute_code", { code });
      const text = textOf(result);
      expect(text).toMatch(/too large to show whole/);
      // The kept text holds the whole value, as the sandbox wrote it.
      const kept = keep.mock.calls[0]?.[1] as string;
      expect(kept.startsWith('{"result":[[["a",1]],[["a",1]],')).toBe(true);
      expect(kept.length).toBeGreaterThan(400000 * 10);
      // 4 MB of tiny nodes: neither parsed nor written again on this thread (the relayout bound is far below it).
      const large = (args: unknown[]) => typeof args[0] === "string" && args[0].length > 1024 * 1024;
      expect(parse.mock.calls.filter(large)).toEqual([]);
      expect(stringify.mock.results.filter((r) => typeof r.value === "string" && r.value.length > 1024 * 1024)).toEqual([]);
    } finally {
      parse.mockRestore();
      stringify.mockRestore();
      keep.mockRestore();
    }
  });
});

describe("the answer of a run", () => {
  const run = (fields: Partial<ExecuteResult> & { resultJson?: string }): ExecuteResult => {
    const { resultJson, ...rest } = fields;
    const value = { ok: true, stdout: "", stderr: "", stdoutTruncated: false, stderrTruncated: false, durationMs: 3.4, calls: 2, ...rest };
    return resultJson === undefined ? value : Object.defineProperty(value, "resultJson", { value: resultJson, enumerable: false });
  };

  it.each([
    ["a value", run({ result: { a: [1, "x"] }, resultJson: '{"a":[1,"x"]}', stdout: "out\n" })],
    ["null", run({ result: null, resultJson: "null", stderr: "e" })],
    ["no value", run({})],
    ["a failure", run({ ok: false, error: { kind: "runtime", message: "boom" } })],
  ])("is the same text whether written from the value or from the sandbox's JSON (%s)", (_name, value) => {
    expect(executionJson(value)).toBe(JSON.stringify(executionBody(value)));
    expect(executionResult(value).content[0]).toMatchObject({ text: expect.stringContaining(executionJson(value).slice(0, -1)) });
  });
});
