import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { InvalidArgumentsError } from "./errors";
import { ArgumentValidator, omitNulls } from "./validation";

const problemsOf = (validator: ArgumentValidator, schema: object, args: unknown): string[] => {
  try {
    validator.validate("t__x", schema, args);
    return [];
  } catch (error) {
    if (error instanceof InvalidArgumentsError) return error.problems;
    throw error;
  }
};

const numbers = (names: string[]) => ({
  type: "object",
  properties: Object.fromEntries(names.map((n) => [n, { type: "number" }])),
  required: names,
});

describe("ArgumentValidator", () => {
  const validator = new ArgumentValidator();

  it("names every problem of wrong arguments, not only the first", () => {
    expect(problemsOf(validator, numbers(["a", "b"]), { a: "1" })).toEqual(["b: required", "a: must be number"]);
  });

  it("names the first ten problems and counts the rest", () => {
    const names = Array.from({ length: 15 }, (_, i) => `f${i}`);
    const problems = problemsOf(validator, numbers(names), {});
    expect(problems).toHaveLength(11);
    expect(problems.slice(0, 2)).toEqual(["f0: required", "f1: required"]);
    expect(problems[10]).toBe("and 5 more");
  });

  it("names only the first problem of arguments too large to validate twice", () => {
    const schema = { type: "object", properties: { a: { type: "number" }, list: { type: "array", items: { type: "number" } } }, required: ["a", "b"] };
    expect(problemsOf(validator, schema, { a: "1", list: Array.from({ length: 50_000 }, () => 1) })).toHaveLength(1);
  });

  it("stops matching patterns once one validation has spent its time on them", () => {
    const schema = { type: "object", properties: { code: { type: "string", pattern: "^[a-z]+$" } } };
    expect(problemsOf(new ArgumentValidator({ patternBudgetMs: 0 }), schema, { code: "abc" })).toEqual([
      "the values took longer than 0 ms in all to match the tool's patterns; send fewer, shorter or simpler values",
    ]);
    // The next validation has its own budget. A stall of the wall clock past the per-value limit (CI saw one) is tried
    // again by the validator and here; a budget left spent would say the budget's sentence every time.
    let problems = problemsOf(validator, schema, { code: "abc" });
    for (let attempt = 1; attempt < 3 && problems.length > 0; attempt++) {
      expect(problems).toEqual([expect.stringMatching(/^a value took longer than 50 ms/)]);
      problems = problemsOf(validator, schema, { code: "abc" });
    }
    expect(problems).toEqual([]);
  });
});

describe("a schema pattern's time limit, on the wall clock", () => {
  // Fibonacci backtracking: 25 a's take a few milliseconds to fail, 40 take minutes.
  const schema = { type: "object", properties: { s: { type: "string", pattern: "^(a|aa)*c$" } } };

  it("refuses a value that is slow to match, after a second try", () => {
    expect(problemsOf(new ArgumentValidator(), schema, { s: `${"a".repeat(40)}b` })).toEqual([
      "a value took longer than 50 ms to match the tool's pattern /^(a|aa)*c$/; send a shorter or simpler value",
    ]);
  });

  it("does not refuse a value because the process was stalled while matching it", async () => {
    // A child validates a value that takes ~4 ms to fail the pattern, again and again, and is stopped for 150 ms
    // (SIGSTOP) in the middle: every answer must still be the pattern's own problem, none "took longer than 50 ms".
    const script = `
      import { ArgumentValidator } from ${JSON.stringify(new URL("./validation.ts", import.meta.url).href)};
      const validator = new ArgumentValidator({ patternBudgetMs: 60_000 });
      const schema = ${JSON.stringify(schema)};
      const answers = new Map();
      const validate = () => { try { validator.validate("t__x", schema, { s: "a".repeat(25) + "b" }); return "valid"; } catch (e) { return String(e.problems); } };
      validate();
      process.stdout.write("ready\\n");
      for (const end = performance.now() + 700; performance.now() < end; ) { const a = validate(); answers.set(a, (answers.get(a) ?? 0) + 1); }
      process.stdout.write(JSON.stringify([...answers]) + "\\n");
    `;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    const exited = new Promise((resolve) => child.on("exit", resolve));
    for (const end = Date.now() + 20_000; !out.includes("ready") && Date.now() < end; ) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 150));
    child.kill("SIGSTOP");
    await new Promise((r) => setTimeout(r, 150));
    child.kill("SIGCONT");
    await exited;
    const answers = new Map<string, number>(JSON.parse(out.split("\n")[1] ?? "[]") as Array<[string, number]>);
    expect([...answers.keys()]).toEqual(['s: must match pattern "^(a|aa)*c$"']);
    expect(answers.get('s: must match pattern "^(a|aa)*c$"')).toBeGreaterThan(20);
  }, 30_000);
});

describe("omitNulls: null for an optional parameter that cannot hold it means omitted", () => {
  const schema = {
    type: "object",
    properties: {
      region: { type: "string" },
      verbose: { type: "boolean" },
      note: { type: ["string", "null"] },
      pick: { anyOf: [{ type: "null" }, { type: "number" }] },
    },
    required: ["region"],
  };

  it("drops such a null, so the call validates and the server never sees it (nor its Mcp-Param header)", () => {
    const args = { region: "eu", verbose: null, query: "q" };
    expect(omitNulls(schema, args)).toEqual({ region: "eu", query: "q" });
    expect(problemsOf(new ArgumentValidator(), schema, omitNulls(schema, args))).toEqual([]);
  });

  it("keeps a null the schema allows, a required one (the validator then says what is wrong), and one for a property it does not name", () => {
    const args = { region: null, note: null, pick: null, extra: null };
    expect(omitNulls(schema, args)).toBe(args);
    expect(problemsOf(new ArgumentValidator(), schema, omitNulls(schema, args))).toEqual([expect.stringContaining("region")]);
  });
});
