import { runInNewContext } from "node:vm";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { generateZodSource, ModuleTree, type CodegenTool } from "../src/index";
import { HOST_CALL } from "./tools";
import { evaluateZod, typeCheck } from "./typecheck";

const NASTY = "*/ /* `tick` ${globalThis.x} \"dq\" 'sq' \\ back\nnew line\r\ncrlf \u2028ls\u2029ps \u0000nul é 漢字 🎉 */";

/** Parsed from JSON, as a server's tools/list arrives: `__proto__` is an own key there, not the prototype. */
const inputSchema = JSON.parse(
  JSON.stringify({
    type: "object",
    description: NASTY,
    $defs: { [NASTY]: { type: "string", description: NASTY }, __PROTO__: { type: "number" } },
    properties: {
      [NASTY]: { type: "string", description: NASTY, default: NASTY, format: NASTY, pattern: NASTY },
      class: { type: "string" },
      default: { type: "number" },
      "key with spaces": { enum: [NASTY, "*/", "`${a}`", "\u2028", 1] },
      "": { const: NASTY },
      nested: { type: "object", properties: { [NASTY]: { $ref: `#/$defs/${encodeURIComponent(NASTY.replace(/~/g, "~0").replace(/\//g, "~1"))}` } } },
      upper: { $ref: "#/$defs/__PROTO__" },
      __PROTO__: { type: "string" },
      picked: {
        oneOf: [
          { type: "object", properties: { k: { const: "a" } }, required: ["k"] },
          { type: "object", properties: { k: { const: "b" } }, required: ["k"] },
        ],
        discriminator: { propertyName: 'k", []); globalThis.pwned = 1; z.union(["' },
      },
      malformed: { type: "string", minLength: "3", description: 42, enum: "abc", oneOf: "x", properties: [], required: "no" },
    },
    required: ["class", "", NASTY, "__PROTO__"],
  }).replace(/__PROTO__/g, "__proto__"),
) as Record<string, unknown>;

const hostile: CodegenTool[] = [
  {
    server: "evil",
    name: NASTY,
    qualifiedName: `evil__${NASTY}`,
    functionName: "x",
    title: NASTY,
    description: NASTY,
    inputSchema,
    outputSchema: inputSchema,
    annotations: { title: NASTY, readOnlyHint: true },
  },
  { server: "evil", name: "call_tool", qualifiedName: "evil__call_tool", functionName: "callTool", inputSchema: { type: "object" } },
  { server: "evil", name: "constructor", qualifiedName: "evil__constructor", functionName: "constructor", inputSchema: { type: "object" } },
  { server: "evil", name: "$", qualifiedName: "evil__$", functionName: "$", description: "*/", inputSchema: inputSchema },
];

describe("hostile tool names, descriptions and schemas", () => {
  const tree = new ModuleTree({ hostCallGlobal: HOST_CALL });
  tree.setServer("evil", hostile);
  const modules = Object.fromEntries(tree.list().map((specifier) => [specifier, tree.get(specifier) as string]));
  modules["mcp/servers/evil/x.schema"] = tree.get("mcp/servers/evil/x.schema") as string;

  it("never produce TypeScript that fails to compile", () => {
    modules["mcp/servers/evil/schemas"] =
      `import { z } from "zod";\nexport const xInput = ${generateZodSource(inputSchema)};\nexport type X = z.infer<typeof xInput>;\n`;
    expect(typeCheck(modules)).toEqual([]);
  });

  it("keep every string exact: the wrapper calls the tool by its real name", async () => {
    const calls: unknown[] = [];
    const bridge = { callTool: async (name: string, args: unknown) => calls.push([name, args]) };
    const { outputText } = ts.transpileModule(modules["mcp/servers/evil/x"] as string, {
      compilerOptions: { target: ts.ScriptTarget.ES2020, module: ts.ModuleKind.CommonJS },
    });
    const exports: Record<string, (input: unknown) => Promise<unknown>> = {};
    runInNewContext(outputText, { exports, require: (specifier: string) => (specifier === "mcp/bridge" ? bridge : undefined) });
    await exports.x?.({ class: "c" });
    expect(calls).toEqual([[`evil__${NASTY}`, { class: "c" }]]);
  });

  it("keep comments closed and literals exact in the emitted types", () => {
    const source = modules["mcp/servers/evil/x"] as string;
    expect(source).toContain("   * *\\/ /* `tick` ${globalThis.x} \"dq\" 'sq' \\ back\n   * new line\n   * crlf\n   * ls\n   * ps nul é 漢字 🎉 *\\/\n");
    expect(source).toContain("  class: string;");
    expect(source).toContain(
      `  "key with spaces"?: ${JSON.stringify(NASTY)
        .replace(/\u2028/g, "\\u2028")
        .replace(/\u2029/g, "\\u2029")} | "*/" | "\`\${a}\`" | "\\u2028" | 1;`,
    );
    expect(source).toContain(`  "__proto__": string;`);
    expect(source).toContain("upper?: Proto;");
  });

  it("give .schema modules that evaluate to the schemas exactly, __proto__ keys as own keys", () => {
    const { outputText } = ts.transpileModule(modules["mcp/servers/evil/x.schema"] as string, {
      compilerOptions: { target: ts.ScriptTarget.ES2020, module: ts.ModuleKind.CommonJS },
    });
    const exports: Record<string, unknown> = {};
    runInNewContext(outputText, { exports });
    expect(JSON.stringify(exports.schema)).toBe(JSON.stringify(inputSchema));
    expect(JSON.stringify(exports.outputSchema)).toBe(JSON.stringify(inputSchema));
    expect(Object.keys((exports.schema as { properties: object }).properties)).toContain("__proto__");
    expect((globalThis as { pwned?: unknown }).pwned).toBeUndefined();
  });

  it("give zod schemas that build and validate", () => {
    const schema = evaluateZod<z.ZodType>(generateZodSource(inputSchema), z);
    expect(schema.safeParse({ class: "c", "": NASTY, [NASTY]: "v" }).success).toBe(true);
    expect(schema.safeParse({ class: "c", "": "other", [NASTY]: "v" }).success).toBe(false);
    expect(schema.safeParse({ class: "c", "": NASTY, [NASTY]: "v", picked: { k: "c" } }).success).toBe(false);
    expect((globalThis as { pwned?: unknown }).pwned).toBeUndefined();
  });
});
