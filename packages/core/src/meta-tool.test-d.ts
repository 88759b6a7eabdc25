import { describe, expectTypeOf, it } from "vitest";
import { defineMetaTool, type MetaTool, type MetaToolContext, type MetaToolServices } from "./meta-tool";
import type { ToolResult } from "./mcp";

// Not `as const`: ToolDefinition's `required` is a mutable string[] (InputSchema's is readonly), so a readonly tuple is refused.
const inputSchema: { type: "object"; properties: { text: { type: "string" } }; required: string[] } = {
  type: "object",
  properties: { text: { type: "string" } },
  required: ["text"],
};
const done: ToolResult = { content: [] };

describe("defineMetaTool", () => {
  it("types run's input from the type argument and keeps it in the MetaTool it returns", () => {
    const echo = defineMetaTool<{ text: string }>({
      name: "echo",
      inputSchema,
      run: async (input, ctx) => {
        expectTypeOf(input).toEqualTypeOf<{ text: string }>();
        expectTypeOf(ctx).toEqualTypeOf<MetaToolContext<MetaToolServices>>();
        return done;
      },
    });
    expectTypeOf(echo).toEqualTypeOf<MetaTool<{ text: string }, MetaToolServices>>();
    expectTypeOf(echo.run).parameter(0).toEqualTypeOf<{ text: string }>();
  });

  it("hands run the services its host declares", () => {
    interface Clock {
      now(): number;
    }
    const tool = defineMetaTool<{ text: string }, Clock>({
      name: "time",
      inputSchema,
      run: async (_input, { services }) => {
        expectTypeOf(services).toEqualTypeOf<Clock>();
        expectTypeOf(services.now()).toBeNumber();
        return done;
      },
    });
    expectTypeOf(tool).toEqualTypeOf<MetaTool<{ text: string }, Clock>>();
    // A tool for one host's services is not a tool for the default services.
    expectTypeOf(tool).not.toMatchTypeOf<MetaTool<{ text: string }>>();
  });

  it("refuses a run that answers something other than a ToolResult, or reads a field its input does not have", () => {
    defineMetaTool<{ text: string }>({
      name: "bad",
      inputSchema,
      // @ts-expect-error: run must resolve to a ToolResult
      run: async () => 42,
    });
    defineMetaTool<{ text: string }>({
      name: "bad",
      inputSchema,
      run: async (input) => {
        // @ts-expect-error: the input has no field `count`
        input.count;
        return done;
      },
    });
    // @ts-expect-error: a meta-tool's schema is an object schema
    defineMetaTool<{ text: string }>({ name: "bad", inputSchema: { type: "string", properties: {} }, run: async () => done });
  });
});
