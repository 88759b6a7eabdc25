import { describe, expect, it } from "vitest";
import { ERROR_BRAND } from "@codemux/core";
import { ConfigError, DownstreamError, PoolError, ServerUnavailableError, ToolNotFoundError } from "./errors";

describe("PoolError", () => {
  it("is recognized by its brand across installed copies, and subclasses by their code", () => {
    const foreign = Object.assign(new Error("from another copy"), { [ERROR_BRAND]: "pool", code: "SERVER_UNAVAILABLE" });
    expect(PoolError.isInstance(foreign)).toBe(true);
    expect(ServerUnavailableError.isInstance(foreign)).toBe(true);
    expect(ConfigError.isInstance(foreign)).toBe(false);
    expect(PoolError.isInstance(Object.assign(new Error("x"), { [ERROR_BRAND]: "catalog" }))).toBe(false);
    const error = new ToolNotFoundError("fs", "write_file", "it is denied by the config's tools.deny", { denied: true });
    expect(error).toMatchObject({ code: "TOOL_NOT_FOUND", data: { server: "fs", tool: "write_file", denied: true } });
  });

  it("never carries a URL secret in its message", () => {
    const error = new DownstreamError("r", "t", "HTTP 500 from https://x.dev/mcp?token=SECRET");
    expect(error.message).toBe("r__t failed: HTTP 500 from https://x.dev/mcp?token=***");
  });
});
