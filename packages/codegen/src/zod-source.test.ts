import { describe, expect, it } from "vitest";
import { z } from "zod";
import { evaluateZod, typeCheck } from "../test/typecheck";
import { generateZodSource } from "./zod-source";

/** The generated expression evaluated against the real zod, as a program importing schemas.ts would get it. */
function compile(schema: unknown): z.ZodType {
  return evaluateZod<z.ZodType>(generateZodSource(schema), z);
}

describe("generateZodSource", () => {
  it("emits a zod 4 expression that validates like the JSON Schema", () => {
    const source = generateZodSource({
      type: "object",
      properties: { path: { type: "string", description: "Path of the file." }, head: { type: "number" } },
      required: ["path"],
    });
    expect(source).toBe(`z.object({ "path": z.string().describe("Path of the file."), "head": z.number().optional() })`);
    const schema = compile(JSON.parse(JSON.stringify({ type: "object", properties: { path: { type: "string" } }, required: ["path"] })));
    expect(schema.safeParse({ path: "a" }).success).toBe(true);
    expect(schema.safeParse({}).success).toBe(false);
  });

  it("follows local $refs, which json-schema-to-zod alone turns into any", () => {
    const schema = compile({
      type: "object",
      $defs: { point: { type: "object", properties: { x: { type: "number" } }, required: ["x"] } },
      properties: { at: { $ref: "#/$defs/point" }, flag: { type: "boolean" }, same: { $ref: "#/properties/flag" } },
      required: ["at"],
    });
    expect(schema.safeParse({ at: { x: 1 }, same: true }).success).toBe(true);
    expect(schema.safeParse({ at: { x: "1" } }).success).toBe(false);
    expect(schema.safeParse({ at: { x: 1 }, same: "yes" }).success).toBe(false);
  });

  it("accepts anything where a schema refers back into itself", () => {
    const schema = compile({
      $defs: { node: { type: "object", properties: { children: { type: "array", items: { $ref: "#/$defs/node" } } }, required: ["children"] } },
      $ref: "#/$defs/node",
    });
    expect(schema.safeParse({ children: [{ anything: 1 }] }).success).toBe(true);
    expect(schema.safeParse({}).success).toBe(false);
  });

  it("keeps a property named __proto__ a key of the shape instead of setting the shape's prototype", () => {
    const source = generateZodSource(JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"},"a":{"type":"number"}}}'));
    expect(source).toBe(`z.object({ ["__proto__"]: z.string().optional(), "a": z.number().optional() })`);
    const schema = evaluateZod<z.ZodObject>(source, z);
    expect(Object.keys(schema.shape)).toEqual(["__proto__", "a"]);
    expect(Object.getPrototypeOf(schema.shape)).toBe(Object.prototype);
  });

  it("emits source that type-checks against zod", () => {
    const source = generateZodSource({
      type: "object",
      properties: {
        tags: { type: "array", items: { type: "string" } },
        mode: { enum: ["a", "b"] },
        meta: { type: "object", additionalProperties: { type: "number" } },
      },
    });
    expect(typeCheck({ schema: `import { z } from "zod";\nexport const s = ${source};\nexport type S = z.infer<typeof s>;\n` })).toEqual([]);
  });
});
