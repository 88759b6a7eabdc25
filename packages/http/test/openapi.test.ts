import { describe, expect, it } from "vitest";
import type { Gateway } from "../src/context";
import { openApiDocument } from "../src/openapi";

type Operation = {
  parameters?: Array<{ name: string; description?: string; schema?: Record<string, unknown> }>;
  requestBody?: { content: Record<string, { schema: { properties?: Record<string, { description?: string }> } }> };
};

const doc = openApiDocument({ options: { tokens: [{ name: "a", token: "token-0123456789" }], allowQueryToken: true } } as unknown as Gateway) as {
  paths: Record<string, Record<string, Operation>>;
};
const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
  Object.entries(ops).map(([method, op]) => ({ where: `${method.toUpperCase()} ${path}`, op })),
);

describe("OpenAPI document of REST /v1", () => {
  it("describes every parameter and every body property in its own words", () => {
    const missing: string[] = [];
    for (const { where, op } of operations) {
      for (const p of op.parameters ?? []) if (!p.description?.trim()) missing.push(`${where} ?${p.name}`);
      for (const [type, content] of Object.entries(op.requestBody?.content ?? {})) {
        for (const [name, property] of Object.entries(content.schema.properties ?? {}))
          if (!property.description?.trim()) missing.push(`${where} body(${type}).${name}`);
      }
    }
    expect(missing).toEqual([]);
    // The paged listing, read_result's ops and the exec body are the ones the MCP listing leaves bare.
    const described = operations.flatMap(({ op }) => (op.parameters ?? []).map((p) => p.name));
    expect(described).toEqual(
      expect.arrayContaining(["limit", "server", "detail", "offset", "format", "op", "lines", "from", "to", "pattern", "context", "fromByte", "maxBytes"]),
    );
  });

  it("keeps codemux's listing marker out of the JSON Schemas", () => {
    expect(JSON.stringify(doc)).not.toContain("unlisted");
  });
});
