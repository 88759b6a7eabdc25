import { describe, expect, it } from "vitest";
import { cleanTools } from "./tool-definitions";

const schema = { type: "object", properties: {} };

describe("cleanTools", () => {
  it("keeps good definitions as they are and drops a tool only when its name or input schema is bad", () => {
    const { tools, problems } = cleanTools([
      { name: "good", inputSchema: schema, annotations: { readOnlyHint: true } },
      { name: "hinted", inputSchema: schema, annotations: { readOnlyHint: "true", idempotentHint: 1, title: "Hinted" } },
      { name: "no_schema" },
      { inputSchema: schema },
      "not a tool",
    ]);
    expect(tools).toEqual([
      { name: "good", inputSchema: schema, annotations: { readOnlyHint: true } },
      { name: "hinted", inputSchema: schema, annotations: { title: "Hinted" } },
    ]);
    expect(problems).toEqual([
      'tool "hinted": dropped annotations.readOnlyHint (expected boolean, received string), annotations.idempotentHint (expected boolean, received number)',
      'tool "no_schema": dropped the tool (inputSchema: expected object, received undefined)',
      "tool #4: dropped the tool (name: expected string, received undefined)",
      "tool #5: dropped (not an object)",
    ]);
  });
});
