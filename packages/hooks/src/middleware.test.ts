import { silentLogger, type CallContext, type ToolResult } from "@codemux/core";
import { describe, expect, it } from "vitest";
import { pluginMiddleware } from "./middleware";

const context = {
  entry: { qualifiedName: "s__echo", server: "s", name: "echo", tool: { name: "echo", inputSchema: { type: "object" } } },
} as unknown as CallContext;

describe("pluginMiddleware", () => {
  it("with no plugin in force hands the call on as it is: the answer is the rest of the chain's own promise", async () => {
    const answer = Promise.resolve<ToolResult>({ content: [] });
    const middleware = pluginMiddleware([], { logger: silentLogger });
    expect(middleware(context, () => answer)).toBe(answer);
    await middleware.close();
  });

  it("fails every call with the init's error while a plugin could not start", async () => {
    const middleware = pluginMiddleware([{ name: "broken", init: () => Promise.reject(new Error("no disk")), beforeCall: () => undefined }], {
      logger: silentLogger,
    });
    const next = () => Promise.resolve<ToolResult>({ content: [] });
    await expect(middleware({ ...context, state: new Map() } as CallContext, next)).rejects.toThrow(/broken.*no disk/);
    await expect(middleware({ ...context, state: new Map() } as CallContext, next)).rejects.toThrow(/broken.*no disk/);
    await middleware.close();
  });
});
