import { describe, expect, it } from "vitest";
import { typeCheck } from "../test/typecheck";
import { schemaToTypeScript } from "./schema-to-typescript";

interface Case {
  schema: unknown;
  /** The exact emitted declarations, where the text is the contract. */
  expected?: string;
  /** Fragments the emitted text must contain. */
  contains?: string[];
  /** Code appended to the module that must type-check: it shows the type accepts and rejects the right values. */
  usage?: string;
}

const cases: Record<string, Case> = {
  "required and optional properties with JSDoc": {
    schema: {
      type: "object",
      properties: {
        path: { type: "string", description: "Path of the file." },
        head: { type: "integer", description: "If provided, returns only the first N lines of the file", minimum: 1, default: 10 },
        email: { type: "string", format: "email", maxLength: 50, pattern: "^.+@.+$" },
        old: { type: "boolean", deprecated: true },
      },
      required: ["path"],
    },
    expected: `export interface T {
  /** Path of the file. */
  path: string;
  /**
   * If provided, returns only the first N lines of the file
   * @default 10
   * @minimum 1
   */
  head?: number;
  /**
   * @format email
   * @maxLength 50
   * @pattern ^.+@.+$
   */
  email?: string;
  /** @deprecated */
  old?: boolean;
}
`,
    usage: `const ok: T = { path: "a", head: 3 };
// @ts-expect-error path is required
const missing: T = { head: 3 };
// @ts-expect-error head is a number
const wrong: T = { path: "a", head: "3" };
export { ok, missing, wrong };`,
  },
  "nested objects are inline and indented": {
    schema: {
      type: "object",
      properties: {
        edit: { type: "object", properties: { old: { type: "string" }, to: { type: "object", properties: { line: { type: "number" } } } }, required: ["old"] },
      },
      required: ["edit"],
    },
    expected: `export interface T {
  edit: {
    old: string;
    to?: {
      line?: number;
    };
  };
}
`,
  },
  "enum and const become literal unions": {
    schema: { type: "object", properties: { mode: { enum: ["a", "b's", 1, -2, true, null] }, kind: { const: 'x"y' } }, required: ["mode", "kind"] },
    contains: [`mode: "a" | "b's" | 1 | -2 | true | null;`, `kind: "x\\"y";`],
    usage: `// @ts-expect-error not a member
const bad: T = { mode: "c", kind: 'x"y' };
export { bad };`,
  },
  "type arrays and nullable": {
    schema: {
      type: "object",
      properties: { a: { type: ["string", "null"] }, b: { type: "number", nullable: true }, c: { type: ["integer", "boolean"] } },
    },
    contains: ["a?: string | null;", "b?: number | null;", "c?: number | boolean;"],
  },
  "anyOf and oneOf are unions, allOf an intersection": {
    schema: {
      type: "object",
      properties: {
        id: { anyOf: [{ type: "string" }, { type: "number" }] },
        shape: {
          oneOf: [
            { type: "object", properties: { kind: { const: "circle" }, r: { type: "number" } }, required: ["kind", "r"] },
            { type: "object", properties: { kind: { const: "square" }, side: { type: "number" } }, required: ["kind", "side"] },
          ],
        },
        both: {
          allOf: [
            { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
            { anyOf: [{ type: "object", properties: { b: { type: "number" } }, required: ["b"] }, { type: "null" }] },
          ],
        },
      },
      required: ["id", "shape", "both"],
    },
    contains: ["id: string | number;", "} | {", "} & ({"],
    usage: `const ok: T = { id: 1, shape: { kind: "circle", r: 2 }, both: { a: "x", b: 1 } };
// @ts-expect-error a square has a side
const bad: T = { id: "1", shape: { kind: "square", r: 2 }, both: { a: "x", b: 1 } };
export { ok, bad };`,
  },
  "an unconstrained union member makes the union unknown": {
    schema: { type: "object", properties: { x: { anyOf: [{ type: "string" }, {}] } } },
    contains: ["x?: unknown;"],
  },
  "arrays and tuples": {
    schema: {
      type: "object",
      properties: {
        tags: { type: "array", items: { type: "string" } },
        ids: { type: "array", items: { anyOf: [{ type: "string" }, { type: "number" }] } },
        any: { type: "array" },
        point: { type: "array", prefixItems: [{ type: "number" }, { type: "number" }], items: false, minItems: 2 },
        old: { type: "array", items: [{ type: "string" }, { type: "boolean" }], minItems: 1, maxItems: 2 },
        open: { type: "array", prefixItems: [{ type: "string" }], items: { type: "number" }, minItems: 1 },
      },
    },
    contains: [
      "tags?: string[];",
      "ids?: (string | number)[];",
      "any?: unknown[];",
      "point?: [number, number];",
      "old?: [string, boolean?];",
      "open?: [string, ...number[]];",
    ],
    usage: `const ok: T = { point: [1, 2], old: ["a"], open: ["a", 1, 2] };
// @ts-expect-error a point has two numbers
const bad: T = { point: [1] };
export { ok, bad };`,
  },
  "additionalProperties and patternProperties": {
    schema: {
      type: "object",
      properties: {
        env: { type: "object", additionalProperties: { type: "string" } },
        loose: { type: "object", additionalProperties: true },
        closed: { type: "object", additionalProperties: false },
        headers: { type: "object", patternProperties: { "^x-": { type: "string" }, "^n-": { type: "number" } } },
        mixed: { type: "object", properties: { id: { type: "number" } }, required: ["id"], additionalProperties: { type: "string" } },
      },
    },
    contains: [
      "env?: Record<string, string>;",
      "loose?: Record<string, unknown>;",
      "closed?: Record<string, never>;",
      "headers?: Record<string, string | number>;",
      "    id: number;\n    [key: string]: unknown;\n",
    ],
    usage: `const ok: T = { env: { A: "1" }, mixed: { id: 1, other: "x" } };
// @ts-expect-error env values are strings
const bad: T = { env: { A: 1 } };
export { ok, bad };`,
  },
  "property names that are not identifiers are quoted": {
    schema: {
      type: "object",
      properties: {
        "my key": { type: "string" },
        "a-b": { type: "string" },
        "1st": { type: "string" },
        class: { type: "string" },
        __proto__x: { type: "string" },
      },
    },
    contains: [`"my key"?: string;`, `"a-b"?: string;`, `"1st"?: string;`, "class?: string;", "__proto__x?: string;"],
  },
  "$defs become named types, shared and recursive": {
    schema: {
      type: "object",
      $defs: {
        "tree-node": {
          type: "object",
          description: "A node.",
          properties: { children: { type: "array", items: { $ref: "#/$defs/tree-node" } } },
          required: ["children"],
        },
      },
      properties: { root: { $ref: "#/$defs/tree-node" }, other: { $ref: "#/$defs/tree-node" } },
      required: ["root"],
    },
    expected: `export interface T {
  root: TreeNode;
  other?: TreeNode;
}

/** A node. */
export interface TreeNode {
  children: TreeNode[];
}
`,
    usage: `const ok: T = { root: { children: [{ children: [] }] } };
export { ok };`,
  },
  "definitions (draft 7) and $defs names avoid taken and global names": {
    schema: {
      definitions: { record: { type: "string" }, t: { type: "number" } },
      type: "object",
      properties: { a: { $ref: "#/definitions/record" }, b: { $ref: "#/definitions/t" } },
    },
    contains: ["a?: Record2;", "b?: T2;", "export type Record2 = string;", "export type T2 = number;"],
  },
  "refs into properties are inlined; # is the root type": {
    schema: {
      type: "object",
      properties: {
        flag: { type: "boolean", description: "A flag." },
        same: { $ref: "#/properties/flag" },
        children: { type: "array", items: { $ref: "#" } },
        loop: { $ref: "#/properties/loop" },
        missing: { $ref: "#/$defs/nothing" },
        remote: { $ref: "https://example.com/schema.json" },
      },
    },
    contains: ["same?: boolean;", "children?: T[];", "loop?: unknown;", "missing?: unknown;", "remote?: unknown;"],
  },
  "deep nesting stops at the depth limit": {
    schema: (() => {
      let schema: Record<string, unknown> = { type: "string" };
      for (let i = 0; i < 40; i++) schema = { type: "object", properties: { n: schema } };
      return schema;
    })(),
    contains: ["n?: unknown;"],
  },
  "empty and boolean schemas": {
    schema: { type: "object", properties: { any: {}, yes: true, no: false, obj: { type: "object" } } },
    contains: ["any?: unknown;", "yes?: unknown;", "no?: never;", "obj?: Record<string, unknown>;"],
  },
  "a schema that is not an object": {
    schema: { type: "string", description: "Just text." },
    expected: "/** Just text. */\nexport type T = string;\n",
  },
};

describe("schemaToTypeScript", () => {
  const outputs = Object.fromEntries(Object.entries(cases).map(([title, c]) => [title, schemaToTypeScript(c.schema, { name: "T" })]));

  it.each(Object.keys(cases))("%s", (title) => {
    const c = cases[title] as Case;
    const output = outputs[title] as string;
    if (c.expected !== undefined) expect(output).toBe(c.expected);
    for (const fragment of c.contains ?? []) expect(output).toContain(fragment);
  });

  it("escapes */ in descriptions so the comment cannot end early", () => {
    const output = schemaToTypeScript(
      { type: "object", description: "Top */ level", properties: { a: { type: "string", description: "ends */ here\nsecond line", pattern: "a*/b" } } },
      { name: "T" },
    );
    expect(output).toBe(`/** Top *\\/ level */
export interface T {
  /**
   * ends *\\/ here
   * second line
   * @pattern a*\\/b
   */
  a?: string;
}
`);
  });

  it("every emitted declaration type-checks, and the usage checks hold", () => {
    const modules = Object.fromEntries(
      Object.entries(cases).map(([title, c], i) => [`case/${i}`, `// ${title}\n${outputs[title]}\n${c.usage ?? "export {};"}\n`]),
    );
    expect(typeCheck(modules)).toEqual([]);
  });
});
